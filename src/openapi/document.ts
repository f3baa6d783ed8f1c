import parse from 'joi-to-json';
import type { ObjectSchema } from 'joi';
import { EVENT_NAMES, EVENT_TYPES } from '../events';
import { MAX_LIMIT } from '../http/listQuery';
import { CONTROL_CHARACTERS } from '../lib/validation';
import { writeMessages, type ResourceDef } from '../http/resource';
import { allRoutes, type RouteRecord } from '../http/routes';
import { DATABASE_BUSY, DATABASE_UNAVAILABLE } from '../http/errors';
import { IN_PROGRESS, OTHER_REQUEST } from '../http/idempotency';
import { DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER } from '../webhooks/signing';
import { responseDataBuilder, type ResponseData } from './responses/responseData';

/**
 * The OpenAPI 3.1 document of the API, generated from the route records (src/http/routes.ts) and
 * the joi schemas the server validates with (converted by joi-to-json): never written by hand, so
 * it cannot drift from what the server accepts. Built once per set of routes.
 */

type Json = Record<string, any>;

const VERSION: string = (() => {
  try {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    return require('../../package.json').version;
  } catch {
    try {
      // eslint-disable-next-line @typescript-eslint/no-var-requires
      return require('../../../package.json').version;
    } catch {
      return '0.0.0';
    }
  }
})();

/** A translation's locale (lib/validation.ts isLocale: an ISO 639-1 language, optionally a region). */
const LOCALE_SUFFIX = ':[a-z]{2}([_-][A-Za-z]{2,4})?';

// ---------------------------------------------------------------------------------------------
// joi → JSON Schema, and what joi-to-json cannot know: the project's own joi types.

const FLAG: Json = { type: 'integer', enum: [0, 1], description: 'A boolean: 1 or 0 (true/false and "1"/"0" are accepted).' };
const IDS: Json = {
  description: 'One id, or several: a comma-separated string (`1,2,3`) or repeated parameters.',
  oneOf: [
    { type: 'integer', minimum: -1 },
    { type: 'string', pattern: '^\\s*-?\\d+\\s*(,\\s*-?\\d+\\s*)*$' },
    { type: 'array', items: { type: 'integer', minimum: -1 }, maxItems: 1000 },
  ],
};

/**
 * Rewrites joi-to-json's output in place into valid JSON Schema 2020-12 that says what the server
 * does. A joi schema whose rule joi cannot describe (a `custom()`) names the JSON Schema to show
 * in its `x-schema` meta; joi-to-json drops a pattern's `invert`, so the one-line rule's
 * (lib/validation.ts, `oneLine`: no control characters) becomes `not: { pattern }` here.
 */
function fix(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(fix);
  if (!schema || typeof schema !== 'object') return schema;
  const s = schema as Json;
  if (s['x-schema']) return structuredClone(s['x-schema']);
  for (const [k, v] of Object.entries(s)) {
    // Schemas nested under these keys are maps of schemas or schemas themselves.
    if (['properties', 'patternProperties', '$defs'].includes(k)) {
      for (const [name, sub] of Object.entries(v as Json)) {
        // joi-to-json also lists pattern keys (`/^\d+$/`) among the properties: they are patterns.
        if (k === 'properties' && /^\/.*\/[a-z]*$/.test(name)) delete (v as Json)[name];
        else (v as Json)[name] = fix(sub);
      }
    } else if (['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains'].includes(k) && typeof v === 'object') {
      s[k] = fix(v);
    } else if (['anyOf', 'oneOf', 'allOf', 'prefixItems'].includes(k)) {
      s[k] = (v as unknown[]).map(fix);
    }
  }
  // After the walk above: the `not` added here is final.
  if (s.pattern === CONTROL_CHARACTERS.source) {
    delete s.pattern;
    s.not = { pattern: CONTROL_CHARACTERS.source };
  }
  // The server ignores fields it does not know (they are stripped), it does not refuse them.
  if (s.additionalProperties === false) delete s.additionalProperties;
  if (s.properties && !Object.keys(s.properties).length) delete s.properties;
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  const own = types.find((t) => t === 'flag' || t === 'ids');
  if (own) {
    const nullable = types.includes('null');
    const { type: _type, ...rest } = s;
    const base = own === 'flag' ? FLAG : IDS;
    const merged = { ...rest, ...base };
    return nullable ? { ...rest, anyOf: [base, { type: 'null' }], description: base.description } : merged;
  }
  return s;
}

const toJsonSchema = (schema: ObjectSchema): Json => fix(parse(schema, 'open-api-3.1')) as Json;

/** A plausible value of a schema, for request examples. */
function sample(name: string, s: Json | undefined): unknown {
  if (!s) return 'string';
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum.find((e: unknown) => e !== null && e !== '') ?? s.enum[0];
  if (s.anyOf || s.oneOf) return sample(name, (s.anyOf ?? s.oneOf).find((x: Json) => x.type !== 'null'));
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  switch (type) {
    case 'integer':
    case 'number':
      return /(_id|^id)$/.test(name) ? 1 : Math.max(Number(s.minimum ?? 0), Math.min(1, Number(s.maximum ?? 1)));
    case 'boolean':
      return true;
    case 'array':
      return [sample(name, s.items)];
    case 'object':
      return {};
    default:
      if (s.format === 'email' || /email/.test(name)) return 'someone@example.com';
      if (s.format === 'uri' || /url/.test(name)) return 'https://example.com/hook';
      if (s.pattern === '^[A-Z]{2}$') return 'GB';
      if (s.pattern === '^[a-z]{2}$') return 'en';
      if (name === 'slug') return 'example-slug';
      if (name === 'colour') return '#1e88e5';
      if (/(^|_)ip$/.test(name)) return '192.0.2.10';
      return name === 'password' ? 'a-long-passphrase' : `Example ${name.replace(/_/g, ' ')}`;
  }
}

function bodyExample(schema: Json): Json {
  const props = (schema.properties ?? {}) as Json;
  const required = new Set<string>(schema.required ?? []);
  const names = Object.keys(props).filter((n) => required.has(n));
  // Required fields, and a few others to show their form.
  for (const n of Object.keys(props)) if (names.length < Math.max(3, required.size) && !names.includes(n)) names.push(n);
  return Object.fromEntries(names.map((n) => [n, sample(n, props[n])]));
}

// ---------------------------------------------------------------------------------------------
// Operations

const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
const pathParams = (path: string) => [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
const area = (path: string) => /^\/api\/([^/]+)/.exec(path)?.[1] ?? 'operations';

function operationId(r: RouteRecord): string {
  const parts = r.path.replace(/^\/api\//, '').split('/').filter(Boolean)
    .map((p) => (p.startsWith(':') ? `By${p[1].toUpperCase()}${p.slice(2)}` : p.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))))
    .map((p) => p[0].toUpperCase() + p.slice(1));
  return `${r.method.toLowerCase()}${parts.join('')}`;
}

const ref = (kind: 'schemas' | 'responses' | 'parameters' | 'headers', name: string) => ({ $ref: `#/components/${kind}/${name}` });
const errorExample = (status: number, message: string) => ({
  description: message,
  content: { 'application/json': { schema: ref('schemas', 'ErrorEnvelope'), example: { status: 'error', message, data: null } } },
});
const RATE_HEADERS = {
  'X-RateLimit-Limit': ref('headers', 'X-RateLimit-Limit'),
  'X-RateLimit-Remaining': ref('headers', 'X-RateLimit-Remaining'),
  'X-RateLimit-Reset': ref('headers', 'X-RateLimit-Reset'),
};

/** Message of a successful write, as the resource builder words it. */
function successMessage(r: RouteRecord): string | null {
  const def = r.resource as ResourceDef<any, any, any> | undefined;
  const custom = def?.custom?.find((c) => c.name === r.action);
  if (custom) return custom.message ?? null;
  if (!r.label) return null;
  const messages = writeMessages(r.label, def?.messages);
  if (r.action === 'create') return messages.created;
  if (r.action === 'update') return messages.updated;
  if (r.action === 'delete') return messages.deleted;
  return null;
}

/** Response data whose shape the route records know more precisely than "a record". */
const DATA_SCHEMAS: Record<string, Json> = {
  'GET /api/core/event': ref('schemas', 'EventPage'),
  'GET /api/core/event/:id': ref('schemas', 'Event'),
};

const EVENT_EXAMPLE = { id: 41, type: 'user.created', created_at: 1700000000, data: { userId: 7, sendEmail: false } };
const DATA_EXAMPLES: Record<string, unknown> = {
  'GET /api/core/event': { events: [EVENT_EXAMPLE], next_cursor: 41, has_more: false },
  'GET /api/core/event/:id': EVENT_EXAMPLE,
};

/** The success envelope around `data` (lists add `count`). */
function envelope(data: Json, list: boolean): Json {
  return {
    type: 'object',
    required: ['status', 'message', 'data', ...(list ? ['count'] : [])],
    properties: {
      status: { type: 'string', enum: ['success'] },
      message: list ? { type: 'null' } : { type: ['string', 'null'] },
      data: list ? { type: 'array', items: data } : data,
      ...(list ? { count: { type: 'integer', minimum: 0, description: 'How many records match (all pages).' } } : {}),
    },
  };
}

function successResponse(r: RouteRecord, describe: (r: RouteRecord) => ResponseData | undefined): Json {
  const message = successMessage(r);
  const key = `${r.method} ${r.path}`;
  const known = DATA_SCHEMAS[key] ? { schema: DATA_SCHEMAS[key], list: false, example: DATA_EXAMPLES[key] } : describe(r);
  let schema: Json;
  let example: Json;
  if (known) {
    schema = envelope(known.schema, known.list);
    example = known.list
      ? { status: 'success', message: null, data: known.example, count: 1 }
      : { status: 'success', message, data: known.example };
  } else {
    // A route whose data the route records do not describe (none today: the test of the
    // responses fails on one): the envelope with a free-form `data`.
    schema = ref('schemas', 'Envelope');
    example = { status: 'success', message, data: null };
  }
  return { description: message ?? 'Success', headers: RATE_HEADERS, content: { 'application/json': { schema, example } } };
}

/** A map (an object, or one among alternatives): sent bracketed in forms and query strings. */
const isObjectLike = (s: Json): boolean => s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object')) || Boolean(s.patternProperties)
  || Boolean((s.anyOf ?? s.oneOf)?.some((x: Json) => x.type === 'object'));

function firstRequired(schema: Json | undefined): string | undefined {
  return schema?.required?.[0];
}

function operation(r: RouteRecord, components: Json, describe: (r: RouteRecord) => ResponseData | undefined): Json {
  const id = operationId(r);
  const def = r.resource as ResourceDef<any, any, any> | undefined;
  const parentParam = def?.parent?.param;
  const parameters: Json[] = pathParams(r.path).map((name) => ({
    name,
    in: 'path',
    required: true,
    description: name === 'id' ? `The ${r.label ?? 'record'}'s id.` : name === parentParam ? `The id of the ${def!.parent!.label}.` : undefined,
    schema: name === 'id' || name === parentParam ? { type: 'integer', minimum: 1, maximum: 4294967295 } : { type: 'string' },
  })).map((p) => (p.description ? p : { name: p.name, in: p.in, required: p.required, schema: p.schema }));

  let query: Json | undefined;
  if (r.query) {
    query = toJsonSchema(r.query);
    const required = new Set<string>(query.required ?? []);
    for (const [name, schema] of Object.entries((query.properties ?? {}) as Json)) {
      const { description, ...rest } = schema as Json;
      const complex = isObjectLike(rest);
      parameters.push({
        name, in: 'query', required: required.has(name), ...(description ? { description } : {}), schema: rest,
        ...(complex ? { style: 'deepObject', explode: true } : {}),
      });
    }
  }
  if (r.method === 'POST') parameters.push(ref('parameters', 'IdempotencyKey'));

  const op: Json = {
    operationId: id,
    summary: `${r.action} ${r.label ?? ''}`.trim(),
    tags: [`${area(r.path)}: ${r.label ?? r.action}`],
    ...(parameters.length ? { parameters } : {}),
  };

  let body: Json | undefined;
  if (r.body && (r.method === 'POST' || r.method === 'PUT')) {
    body = toJsonSchema(r.body);
    if (r.translatable?.length) {
      body.patternProperties = { [`^(${r.translatable.join('|')})${LOCALE_SUFFIX}$`]: { type: 'string', description: 'A translation of the field: `<field>:<locale>`.' } };
    }
    const name = `${id[0].toUpperCase()}${id.slice(1)}Body`;
    components.schemas[name] = body;
    const example = bodyExample(body);
    // A map in a form is bracketed, `customfield[3]=x`: deepObject, as a list's query parameter.
    const maps = Object.entries((body.properties ?? {}) as Json).filter(([, p]) => isObjectLike(p)).map(([n]) => n);
    const encoding = maps.length ? { encoding: Object.fromEntries(maps.map((n) => [n, { style: 'deepObject', explode: true }])) } : {};
    op.requestBody = {
      required: r.action === 'create' || Boolean(body.required?.length),
      description: 'Form-encoded with bracket arrays (`tag[]=1&tag[]=2`, `options[0][value]=x`, `customfield[3]=x`) or JSON; fields may also be sent in the query string (the body wins).',
      content: {
        'application/x-www-form-urlencoded': { schema: ref('schemas', name), example, ...encoding },
        'application/json': { schema: ref('schemas', name), example },
      },
    };
  }

  const responses: Json = {
    [r.status ?? 200]: successResponse(r, describe),
    401: ref('responses', 'Unauthorized'),
    403: ref('responses', 'Forbidden'),
  };
  if (parameters.some((p) => p.in === 'path')) {
    const label = r.label ?? 'record';
    const parent = def?.parent ? ` (or \`The ${def.parent.label} with given ID was not found.\`)` : '';
    responses[404] = { ...errorExample(404, `The ${label} with given ID was not found.`), description: `No ${label} with that id${parent}.` };
  }
  responses[405] = ref('responses', 'MethodNotAllowed');
  if (body || query) {
    const field = firstRequired(body);
    const message = field ? `The ${field.replace(/_/g, ' ')} field is required.` : query?.properties?.order_column ? 'The selected order column is invalid.' : 'The selected value is invalid.';
    responses[422] = { ...errorExample(422, message), description: 'A parameter is missing or invalid (the message names the first one).' };
  }
  if (r.method === 'POST') {
    responses[409] = errorExample(409, IN_PROGRESS);
    responses[422] ??= { ...errorExample(422, OTHER_REQUEST), description: 'The Idempotency-Key was used with another request.' };
  }
  if (body) Object.assign(responses, { 400: ref('responses', 'BadRequest'), 413: ref('responses', 'PayloadTooLarge'), 415: ref('responses', 'UnsupportedMediaType') });
  responses[429] = ref('responses', 'TooManyRequests');
  Object.assign(responses, { 500: ref('responses', 'ServerError'), 503: ref('responses', 'ServiceUnavailable') });
  if (r.action === 'download') downloadResponses(op, responses);
  op.responses = responses;
  return op;
}

/** A file download (src/storage/downloadRoute.ts): bytes, not an envelope, with byte ranges. */
function downloadResponses(op: Json, responses: Json): void {
  const bytes = { '*/*': { schema: { type: 'string', format: 'binary' } } };
  op.description = 'The file under the name it was attached with. One byte range (`Range: bytes=a-b`, `a-`, `-n`) answers 206; several ranges, or an `If-Range` that no longer matches the ETag (the SHA-256), answer the whole file.';
  op.parameters = [...(op.parameters ?? []),
    { name: 'Range', in: 'header', required: false, schema: { type: 'string', example: 'bytes=0-1023' } },
    { name: 'If-Range', in: 'header', required: false, schema: { type: 'string' } },
    { name: 'If-None-Match', in: 'header', required: false, description: 'The ETag of a copy held: 304 when it is still the file.', schema: { type: 'string' } }];
  responses[200] = { description: 'The whole file.', headers: { 'Accept-Ranges': { schema: { type: 'string', enum: ['bytes'] } }, ETag: { schema: { type: 'string' } } }, content: bytes };
  responses[206] = { description: 'The requested range.', headers: { 'Content-Range': { schema: { type: 'string', example: 'bytes 0-1023/52000' } } }, content: bytes };
  responses[304] = { description: 'Not modified (`If-None-Match` with the ETag).' };
  responses[416] = { ...errorExample(416, 'The requested range is not satisfiable.'), description: 'The range lies outside the file; `Content-Range: bytes */<size>`.' };
}

/** The operations outside /api's route records: health, readiness, metrics, this document. */
function operationsPaths(): Json {
  const plain = (summary: string, description: string, ok: Json, extra: Json = {}) => ({
    summary, description, tags: ['operations'], security: [], responses: { 200: ok, ...extra },
  });
  return {
    '/healthz': { get: { operationId: 'getHealthz', ...plain('liveness', 'The process is alive (no dependency is asked).', { description: 'Alive', content: { 'application/json': { schema: ref('schemas', 'Envelope'), example: { status: 'success', message: null, data: { status: 'alive' } } } } }) } },
    '/readyz': {
      get: {
        operationId: 'getReadyz',
        ...plain('readiness', 'MariaDB and Redis answer, every migration is applied and the search engine\'s index is in the database; 503 with the reasons otherwise, and while the process shuts down.',
          { description: 'Ready', content: { 'application/json': { schema: ref('schemas', 'Envelope'), example: { status: 'success', message: null, data: { database: 'ok', redis: 'ok', migrations: 'ok', search: 'ok' } } } } },
          { 503: errorExample(503, 'Not ready: redis: Redis did not answer within 2000 ms.') }),
      },
    },
    '/metrics': {
      get: {
        operationId: 'getMetrics', summary: 'Prometheus metrics', tags: ['operations'], security: [{ metricsToken: [] }],
        description: 'Prometheus text format. Served here only when METRICS_TOKEN is set (send it as a bearer token); METRICS_PORT serves the same without authentication on a port of its own.',
        responses: { 200: { description: 'Metrics', content: { 'text/plain': { schema: { type: 'string' } } } }, 401: errorExample(401, 'The metrics need Authorization: Bearer <METRICS_TOKEN>.') },
      },
    },
    '/api/openapi.json': {
      get: { operationId: 'getOpenApi', ...plain('this document', 'The OpenAPI document (no token needed); `/docs` shows it.', { description: 'The document', content: { 'application/json': { schema: { type: 'object' } } } }) },
    },
  };
}

/** OpenAPI 3.1 `webhooks`: what a subscribed URL receives, per event type. */
function webhooks(): Json {
  return Object.fromEntries(EVENT_NAMES.map((name) => [name, {
    post: {
      operationId: `webhook${name.replace(/(^|\.)(.)/g, (_m, _d, c: string) => c.toUpperCase())}`,
      summary: EVENT_TYPES[name],
      description: `Sent to webhooks subscribed to \`${name}\` or \`*\`. Verify \`${SIGNATURE_HEADER}\` before trusting the body; \`${DELIVERY_HEADER}\` is the same at every retry of a delivery.`,
      parameters: [
        { name: SIGNATURE_HEADER, in: 'header', required: true, description: '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" with the webhook secret>`', schema: { type: 'string' } },
        { name: DELIVERY_HEADER, in: 'header', required: true, description: 'The delivery id (a UUID), stable across retries and redeliveries.', schema: { type: 'string', format: 'uuid' } },
        { name: EVENT_HEADER, in: 'header', required: true, schema: { type: 'string', const: name } },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', 'Event') } } },
      responses: { '2XX': { description: 'Received. Any other answer, or none within the timeout, is retried with exponential backoff.' } },
    },
  }]));
}

function build(routes: readonly RouteRecord[]): Json {
  const components: Json = {
    securitySchemes: {
      apiToken: { type: 'http', scheme: 'basic', description: 'HTTP Basic with the API token as the user name (the password is ignored).' },
      metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN' },
    },
    schemas: {
      Envelope: {
        type: 'object', required: ['status', 'message', 'data'],
        properties: { status: { type: 'string', enum: ['success'] }, message: { type: ['string', 'null'] }, data: {} },
      },
      ErrorEnvelope: {
        type: 'object', required: ['status', 'message', 'data'],
        properties: { status: { type: 'string', enum: ['error'] }, message: { type: 'string' }, data: { type: 'null' } },
      },
      Event: {
        type: 'object', required: ['id', 'type', 'created_at', 'data'],
        properties: {
          id: { type: 'integer', description: 'Increasing: the cursor of the event feed.' },
          type: { type: 'string', enum: EVENT_NAMES },
          created_at: { type: 'integer', description: 'UNIX seconds.' },
          data: { type: 'object', description: 'Ids (and flags) of what changed, never the records themselves: read them through the API.' },
        },
      },
      EventPage: {
        type: 'object', required: ['events', 'next_cursor', 'has_more'],
        properties: {
          events: { type: 'array', items: ref('schemas', 'Event') },
          next_cursor: { type: 'integer', description: 'Pass it as `cursor` to read on.' },
          has_more: { type: 'boolean' },
        },
      },
    },
    parameters: {
      IdempotencyKey: {
        name: 'Idempotency-Key', in: 'header', required: false,
        description: 'Any unique value (a UUID): the same key with the same request within 24 hours answers the first response without doing the work again (`Idempotent-Replayed: true`).',
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      },
    },
    headers: {
      'X-RateLimit-Limit': { description: 'Requests allowed in the window (the limit closest to being reached: per token or per address).', schema: { type: 'integer' } },
      'X-RateLimit-Remaining': { description: 'Requests left in the window.', schema: { type: 'integer' } },
      'X-RateLimit-Reset': { description: 'UNIX seconds when the window ends.', schema: { type: 'integer' } },
      'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } },
    },
    responses: {
      Unauthorized: { ...errorExample(401, 'Authentication is required: send the API token as the user name of HTTP Basic authentication.'), description: 'No token, a malformed Authorization header, or an unknown token.' },
      Forbidden: { ...errorExample(403, 'Your IP address is banned from using the API. The ban ends at 2026-01-01T12:00:00Z (in 60 minutes). An administrator can lift it: `npm run ban -- delete 203.0.113.7` on the server, or DELETE /api/core/ipban/{id}.'), description: 'The address is banned from the API.' },
      MethodNotAllowed: {
        ...errorExample(405, 'The PATCH method is not supported here. Supported methods: GET, PUT, DELETE.'),
        description: 'The path does not offer the method; `Allow` lists those it does.',
        headers: { Allow: { schema: { type: 'string' } } },
      },
      BadRequest: { ...errorExample(400, 'The request body is not valid JSON.'), description: 'A body that cannot be read: JSON that does not parse, a compressed body that is not what its Content-Encoding says.' },
      PayloadTooLarge: { ...errorExample(413, 'The request body is larger than the limit of 26214400 bytes.'), description: 'The body is over the size limit, or holds more than 20,000 parameters.' },
      UnsupportedMediaType: { ...errorExample(415, 'The request body must be application/x-www-form-urlencoded or application/json.'), description: 'Another Content-Type, Content-Encoding or charset.' },
      ServerError: { ...errorExample(500, 'An unexpected error occurred (request 6f1c2a). It has been logged.'), description: 'A fault of the server; the request id finds it in the log.' },
      ServiceUnavailable: {
        ...errorExample(503, DATABASE_UNAVAILABLE),
        description: `The database cannot do the work now; try again after \`Retry-After\` seconds. A request that still met other transactions' locks after the retries (a deadlock, a lock wait timeout) says so instead: \`${DATABASE_BUSY}\``,
        headers: { 'Retry-After': ref('headers', 'Retry-After') },
      },
      TooManyRequests: {
        ...errorExample(429, `Too many requests for this API token: the limit is 600 per 60 seconds. Try again in 12 seconds.`),
        description: 'A rate limit was reached.',
        headers: { ...RATE_HEADERS, 'Retry-After': ref('headers', 'Retry-After') },
      },
    },
  };

  const paths: Json = {};
  const describe = responseDataBuilder(routes, components.schemas);
  for (const r of routes) {
    const p = openApiPath(r.path);
    paths[p] ??= {};
    paths[p][r.method.toLowerCase()] = operation(r, components, describe);
  }
  const tags = [...new Set(Object.values(paths).flatMap((ops) => Object.values(ops as Json).flatMap((o) => (o as Json).tags ?? [])))].sort()
    .map((name) => ({ name }));

  return {
    openapi: '3.1.0',
    info: {
      title: 'Help desk API',
      version: VERSION,
      description: [
        'Every response is the envelope `{status, message, data}` (lists add `count`); errors too, with `data: null`.',
        'Authenticate with HTTP Basic, the API token as the user name. `X-HTTP-Method-Override: PUT|DELETE` on a POST acts as that method.',
        `Lists take PAGING (\`start\`, \`limit\` up to ${MAX_LIMIT}), \`order_column\`/\`order_direction\`, DATES where offered, and their filters.`,
        'Requests are rate limited per token and per address (`X-RateLimit-*`, 429 with `Retry-After`). A POST may carry an `Idempotency-Key`, one made PUT or DELETE by `X-HTTP-Method-Override` too.',
        'Changes are events: read them from `GET /api/core/event` or have them POSTed to your URL (`/api/core/webhook`, see Webhooks).',
      ].join('\n\n'),
    },
    servers: [{ url: '/' }],
    security: [{ apiToken: [] }],
    tags: [...tags, { name: 'operations' }],
    paths: { ...paths, ...operationsPaths() },
    webhooks: webhooks(),
    components,
  };
}

let cached: { size: number; doc: Json } | undefined;

/** The document for the routes mounted now (areas record theirs when they are imported). */
export function openApiDocument(): Json {
  const routes = allRoutes();
  if (!cached || cached.size !== routes.length) cached = { size: routes.length, doc: build(routes) };
  return cached.doc;
}
