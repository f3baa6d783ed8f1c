/**
 * The OpenAPI 3.1 document: generated from the route records and their joi schemas, it lists every
 * route the server serves (a route missing from it fails here), with its parameters, bodies in
 * both encodings, the envelope, the errors and examples, and it validates against the OpenAPI
 * schema (@seriousme/openapi-schema-validator). /docs serves Swagger UI from this server alone.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import Ajv2020 from 'ajv/dist/2020';
import { EVENT_NAMES } from '../../src/events';
import { allRoutes } from '../../src/http/routes';
import { useApi } from '../helpers/app';

const api = useApi();
let doc: any;

beforeAll(async () => {
  const res = await request(api.app).get('/api/openapi.json'); // no token
  expect(res.status).toBe(200);
  doc = res.body;
});

const toPath = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
const op = (method: string, path: string) => doc.paths[toPath(path)]?.[method.toLowerCase()];
const resolve = (o: any) => (o?.$ref ? o.$ref.split('/').slice(1).reduce((acc: any, k: string) => acc[k], doc) : o);

/** The validator is an ES module: it runs in a node process of its own on the document written to a file. */
function validate(document: unknown): Promise<{ valid: boolean; errors?: unknown }> {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(document));
  const cli = join(__dirname, '..', '..', 'node_modules', '@seriousme', 'openapi-schema-validator', 'bin', 'validate-api-cli.js');
  return new Promise((resolvePromise, reject) => {
    execFile(process.execPath, [cli, file], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
      rmSync(dir, { recursive: true, force: true });
      try {
        resolvePromise(JSON.parse(stdout));
      } catch {
        reject(err ?? new Error(`validator output: ${stdout}`));
      }
    });
  });
}

describe('GET /api/openapi.json', () => {
  it('is an OpenAPI 3.1 document that validates', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('has every route of the route records, and nothing the server does not serve', async () => {
    const missing = allRoutes().filter((r) => !op(r.method, r.path)).map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
    const served = new Set(allRoutes().map((r) => `${r.method} ${toPath(r.path)}`));
    const extra = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops as object).map((m) => `${m.toUpperCase()} ${path}`))
      .filter((k) => k.includes(' /api/') && !k.endsWith('/api/openapi.json') && !served.has(k));
    expect(extra).toEqual([]);
    expect(allRoutes().length).toBeGreaterThan(100);
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops as object).map((o: any) => o.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('describes list parameters: PAGING, ordering by the sortable columns, DATES, filters', () => {
    const params = (path: string) => Object.fromEntries(op('GET', path).parameters.map((p: any) => [p.name, p]));
    const bans = params('/api/core/ipban');
    expect(Object.keys(bans)).toEqual(expect.arrayContaining(['start', 'limit', 'order_column', 'order_direction', 'lang', 'ip', 'type']));
    expect(bans.start).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1, default: 1 } });
    expect(bans.order_column.schema.enum).toEqual(['id', 'ip', 'type', 'expiry', 'created_at', 'updated_at']);
    expect(bans.type.schema).toMatchObject({ type: 'integer', enum: [0, 1] });
    const users = params('/api/user/user');
    expect(Object.keys(users)).toEqual(expect.arrayContaining(['created_at_min', 'created_at_max', 'updated_at_min', 'updated_at_max', 'email']));
    expect(users.created_at_min.description).toMatch(/^DATES/);
    const item = params('/api/core/ipban/:id');
    expect(item.id).toMatchObject({ in: 'path', required: true, schema: { type: 'integer', minimum: 1 } });
    const nested = params('/api/core/webhook/:webhook/delivery/:id');
    expect(nested.webhook).toMatchObject({ in: 'path', required: true, schema: { type: 'integer' } });
    // A delivery is of one event type: its log's filter offers the types, not `*`.
    expect(params('/api/core/webhook/:webhook/delivery').event.schema.enum).toEqual(EVENT_NAMES);
    const feed = params('/api/core/event');
    expect(Object.keys(feed)).toEqual(['cursor', 'limit', 'type']);
  });

  it('describes bodies as form and JSON, with translations, and the Idempotency-Key of POSTs', () => {
    const create = op('POST', '/api/core/ipban');
    const form = create.requestBody.content['application/x-www-form-urlencoded'];
    const json = create.requestBody.content['application/json'];
    expect(form.schema).toEqual(json.schema);
    const schema = resolve(form.schema);
    expect(schema.required).toEqual(['ip', 'type']);
    expect(schema.properties.event_api).toMatchObject({ type: 'integer', enum: [0, 1], default: 1 });
    expect(form.example).toMatchObject({ ip: expect.any(String), type: expect.any(Number) });
    expect(create.parameters.map((p: any) => resolve(p).name)).toContain('Idempotency-Key');
    expect(op('PUT', '/api/core/ipban/:id').parameters.map((p: any) => resolve(p).name)).not.toContain('Idempotency-Key');
    const status = resolve(op('POST', '/api/ticket/status').requestBody.content['application/json'].schema);
    expect(Object.keys(status.patternProperties)).toEqual([expect.stringContaining('name')]);
    const hook = resolve(op('POST', '/api/core/webhook').requestBody.content['application/json'].schema);
    expect(hook.properties.events.items.enum).toEqual(['*', ...EVENT_NAMES]);
  });

  it('states the one-line rule as it is (no control character), so that every request example validates against its own schema', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    let bodies = 0;
    const invalid: unknown[] = [];
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, o] of Object.entries<any>(ops)) {
        const form = o.requestBody?.content?.['application/x-www-form-urlencoded'];
        if (!form) continue;
        const check = ajv.compile({ ...resolve(form.schema), $defs: undefined });
        if (!check(form.example)) invalid.push({ op: `${method} ${path}`, example: form.example, errors: check.errors });
        bodies++;
      }
    }
    expect(invalid).toEqual([]);
    expect(bodies).toBeGreaterThan(50);
    const name = resolve(op('POST', '/api/ticket/status').requestBody.content['application/json'].schema).properties.name;
    expect(name).toMatchObject({ type: 'string', not: { pattern: expect.any(String) } });
    expect(name.pattern).toBeUndefined();
    const check = ajv.compile(name);
    expect([check('Open'), check('Open\u0001'), check('line\nbreak')]).toEqual([true, false, false]);
  });

  it('describes custom field values as maps sent bracketed, the article search\'s query, lang on shows, and the body errors', () => {
    const ticket = op('POST', '/api/ticket/ticket').requestBody.content;
    expect(resolve(ticket['application/json'].schema).properties.customfield.anyOf[0]).toMatchObject({ type: 'object', propertyNames: { pattern: '^[0-9]{1,10}$' } });
    expect(ticket['application/x-www-form-urlencoded'].encoding.customfield).toEqual({ style: 'deepObject', explode: true });
    const filter = op('GET', '/api/ticket/ticket').parameters.find((p: any) => p.name === 'customfield');
    expect(filter).toMatchObject({ in: 'query', style: 'deepObject', explode: true, schema: { type: 'object' } });
    const search = op('GET', '/api/selfservice/article/search').parameters;
    expect(search).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'term', required: true }), expect.objectContaining({ name: 'limit' })]));
    for (const path of ['/api/ticket/status/:id', '/api/ticket/ticket/:id', '/api/selfservice/type/:id']) {
      expect(op('GET', path).parameters.find((p: any) => p.name === 'lang')).toMatchObject({ in: 'query', schema: { type: 'string' } });
    }
    expect(Object.keys(op('POST', '/api/ticket/tag').responses)).toEqual(expect.arrayContaining(['400', '413', '415', '500', '503']));
    expect(Object.keys(op('GET', '/api/ticket/tag').responses)).not.toContain('415');
  });

  it('describes the envelope, the errors with their messages, and an example for every operation', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, o] of Object.entries(ops as Record<string, any>)) {
        // 202 for a route that queues a job (the bulk changes), 200 for the others.
        const ok = resolve(o.responses[200] ?? o.responses[202]);
        expect({ path, method, example: ok.content?.['application/json']?.example !== undefined || ok.content?.['*/*']?.schema?.format === 'binary' || !path.startsWith('/api/') || path.endsWith('openapi.json') }).toEqual({ path, method, example: true });
        if (!path.startsWith('/api/') || path.endsWith('openapi.json')) continue;
        for (const status of ['401', '403', '405', '429']) expect({ path, method, status, has: status in o.responses }).toEqual({ path, method, status, has: true });
        if (path.includes('{')) expect({ path, method, has404: '404' in o.responses }).toEqual({ path, method, has404: true });
      }
    }
    const show = op('GET', '/api/core/ipban/:id');
    expect(show.responses[404].content['application/json']).toEqual({
      schema: { $ref: '#/components/schemas/ErrorEnvelope' }, example: { status: 'error', message: 'The ban with given ID was not found.', data: null },
    });
    expect(op('POST', '/api/core/spamrule').responses[422].content['application/json'].example.message).toBe('The text field is required.');
    expect(resolve(show.responses[429]).headers).toHaveProperty('Retry-After');
    const bans = op('GET', '/api/core/ipban').responses[200].content['application/json'].schema;
    expect(bans).toMatchObject({ required: ['status', 'message', 'data', 'count'], properties: { data: { type: 'array', items: { $ref: '#/components/schemas/IpBan' } } } });
    expect(op('POST', '/api/core/ipban').responses[200].content['application/json'].example.message).toBe('Successfully created new ban!');
    // Integrations (docs/integrations.md): the bulk change queues a job (202); the export's parameters.
    expect(Object.keys(op('POST', '/api/ticket/ticket/bulk').responses)).toEqual(expect.arrayContaining(['202']));
    expect(op('POST', '/api/ticket/ticket/bulk').responses[200]).toBeUndefined();
    expect(op('GET', '/api/export/tickets').parameters.map((p: any) => resolve(p).name)).toEqual(expect.arrayContaining(['cursor', 'start_time', 'limit', 'search']));
    expect(op('GET', '/api/ticket/ticket/:id/audit').parameters.map((p: any) => resolve(p).name)).toEqual(expect.arrayContaining(['id', 'start', 'limit']));
    expect(doc.components.schemas.ErrorEnvelope.properties.data).toEqual({ type: 'null' });
    expect(doc.components.securitySchemes.apiToken).toMatchObject({ type: 'http', scheme: 'basic' });
    expect(Object.keys(doc.webhooks)).toEqual(EVENT_NAMES);
    expect(op('GET', '/readyz').security).toEqual([]);
  });

  it('describes the flags of records as 1 or 0, and other small integers as integers', () => {
    const { Ticket: ticket, IpBan: ban, SelfServiceType: type } = doc.components.schemas;
    const FLAG = { type: 'integer', enum: [0, 1] };
    for (const name of ['locked', 'merged', 'internal']) expect({ name, schema: ticket.properties[name] }).toEqual({ name, schema: FLAG });
    for (const name of ['type', 'event_user', 'event_operator', 'event_api']) expect({ name, schema: ban.properties[name] }).toEqual({ name, schema: FLAG });
    // Small integers that are not flags: an id, a self-service type's content (0-2) and view.
    expect(ticket.properties.status_id).toEqual({ type: 'integer' });
    for (const name of ['content', 'view']) expect({ name, schema: type.properties[name] }).toEqual({ name, schema: { type: 'integer' } });
  });

  it('describes attachment downloads as bytes with their conditional and range answers (200, 206, 304, 416)', () => {
    for (const path of ['/api/ticket/attachment/:id/download', '/api/selfservice/attachment/:id/download']) {
      const download = op('GET', path);
      expect({ path, statuses: Object.keys(download.responses) }).toEqual({ path, statuses: expect.arrayContaining(['200', '206', '304', '404', '416']) });
      expect(download.responses[206].headers).toHaveProperty('Content-Range');
      expect(download.responses[200].headers).toHaveProperty('ETag');
      expect(download.responses[416].content['application/json'].example.message).toBe('The requested range is not satisfiable.');
      expect(download.parameters.map((p: any) => resolve(p).name)).toEqual(expect.arrayContaining(['id', 'Range', 'If-Range', 'If-None-Match']));
    }
  });
});

describe('/docs', () => {
  it('serves Swagger UI from this server only, pointed at the document', async () => {
    const page = await request(api.app).get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).not.toMatch(/https?:\/\//);
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(assets).toEqual(expect.arrayContaining(['/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/docs/initializer.js']));
    for (const asset of assets) expect({ asset, status: (await request(api.app).get(asset)).status }).toEqual({ asset, status: 200 });
    const init = await request(api.app).get('/docs/initializer.js');
    expect(init.text).toContain('"/api/openapi.json"');
    expect(init.text).toContain('validatorUrl: null');
    expect((await request(api.app).get('/docs/swagger-initializer.js')).status).toBe(404);
    expect((await request(api.app).get('/docs/')).status).toBe(200);
  });
});
