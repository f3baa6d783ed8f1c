import type { ResourceDef, View } from '../../http/resource';
import type { RouteRecord } from '../../http/routes';
import { exampleOf } from './example';
import { RECORDS } from './records';
import { INT, STR, ANY, array, nullable, object, translated, type Json } from './schema';

/**
 * What a route's success answers in `data`, as a JSON Schema, and whether it is a list (the
 * envelope with `count`). Record schemas are registered as components, once per distinct view.
 */
export interface ResponseData {
  schema: Json;
  list: boolean;
  example: unknown;
}

const area = (path: string) => /^\/api\/([^/]+)/.exec(path)?.[1] ?? '';
const VIEW_SUFFIX: Record<View, string> = { show: '', list: 'ListItem', create: 'Created', update: 'Updated' };

/** `/api/core/job/:id`, `/api/ticket/job/:id` and the bulk change (core/job.ts presentJob). */
const JOB = object({
  id: INT,
  type: STR,
  status: { type: 'string', description: '`queued`, `running`, `done` or `failed`.' },
  input: { ...ANY, description: 'The changes asked for.' },
  progress: object({ total: INT, done: INT, failed: INT, pending: INT }),
  results: array(object({ id: INT, status: STR, message: nullable(STR) })),
  error: nullable(STR),
  created_at: INT,
  updated_at: INT,
  started_at: nullable(INT),
  finished_at: nullable(INT),
});

/** ticket/tickets/auditRoute.ts presentAudit. */
const AUDIT_ENTRY = object({
  id: INT, ticket_id: INT, action: STR,
  actor: object({ type: STR, id: nullable(INT) }),
  channel: STR,
  changes: { ...ANY, description: 'What changed: field → `[before, after]` (or what the action records).' },
  created_at: INT,
});

/** http/settings.ts and ticket/channel.ts: every value of a settings object is a string. */
const SETTINGS = { type: 'object', additionalProperties: { type: 'string' }, description: 'Setting name → value (always a string).' };

/** The resource an export path reads (export/router.ts SOURCES), by its record's key. */
const EXPORTED: Record<string, string> = {
  tickets: 'ticket/ticket', messages: 'ticket/message', users: 'user/user', organisations: 'user/organisation', articles: 'selfservice/article',
};

export function responseDataBuilder(routes: readonly RouteRecord[], components: Json) {
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const defs = new Map<string, ResourceDef<any, any, any>>();
  for (const r of routes) {
    const def = r.resource as ResourceDef<any, any, any> | undefined;
    if (def) defs.set(`${area(r.path)}${def.path}`, def);
  }

  /**
   * The record of a resource in a view: a component of its own when it differs from the show
   * view's. Each (resource, view) is built once: several routes present the same record.
   */
  const refs = new Map<string, Json>();
  const record = (key: string, view: View): Json => {
    const known = refs.get(`${key} ${view}`);
    if (known) return known;
    const entry = RECORDS[key];
    const def = defs.get(key);
    if (!entry || !def) throw new Error(`OpenAPI: no response record for the resource ${key}`);
    const build = (v: View) => (def.translations ? translated(entry.build(v, def), def.translations) : entry.build(v, def));
    components[entry.name] ??= build('show');
    let name = entry.name;
    if (view !== 'show') {
      const own = build(view);
      if (JSON.stringify(own) !== JSON.stringify(components[entry.name])) {
        name = `${entry.name}${VIEW_SUFFIX[view]}`;
        components[name] ??= own;
      }
    }
    refs.set(`${key} ${view}`, ref(name));
    return ref(name);
  };

  const unsaved = (key: string, view: View): Json => {
    const saved = record(key, view).$ref.split('/').pop() as string;
    const props = { ...components[saved].properties };
    for (const k of ['id', 'created_at', 'updated_at']) if (props[k]) props[k] = nullable(props[k]);
    return named(`${saved}Preview`, { ...components[saved], properties: props });
  };

  const named = (name: string, schema: Json) => {
    components[name] ??= schema;
    return ref(name);
  };

  const data = (r: RouteRecord): Omit<ResponseData, 'example'> | undefined => {
    const def = r.resource as ResourceDef<any, any, any> | undefined;
    if (def) {
      const key = `${area(r.path)}${def.path}`;
      const custom = def.custom?.find((c) => c.name === r.action);
      if (custom) {
        const view = custom.view ?? 'show';
        // A GET presented as a list is a search (a ListResult: the list envelope with `count`).
        if (custom.method === 'GET' && view === 'list') return { schema: record(key, 'list'), list: true };
        // A dry run presents the record it would write, unsaved: no id or times yet.
        const one = custom.writesNothing ? unsaved(key, view) : record(key, view);
        return { schema: custom.asArray ? { ...array(one), minItems: 1, maxItems: 1 } : one, list: false };
      }
      switch (r.action) {
        case 'list': return { schema: record(key, 'list'), list: true };
        case 'show': return { schema: record(key, 'show'), list: false };
        case 'create': return { schema: record(key, 'create'), list: false };
        case 'update': return { schema: record(key, 'update'), list: false };
        case 'delete': return { schema: { type: 'null' }, list: false };
        default: return undefined;
      }
    }
    switch (r.action) {
      case 'settings': return { schema: named('Settings', SETTINGS), list: false };
      case 'bulk': return { schema: named('Job', JOB), list: false };
      case 'audit': return { schema: named('TicketAuditEntry', AUDIT_ENTRY), list: true };
      case 'show': if (r.label === 'job') return { schema: named('Job', JOB), list: false }; break;
      case 'export': {
        const key = EXPORTED[r.label ?? ''];
        if (!key) return undefined;
        const name = `${RECORDS[key].name}ExportPage`;
        return {
          schema: named(name, object({
            records: array(record(key, 'show')),
            tombstones: { ...array(object({ id: INT, deleted_at: INT })), description: 'Records deleted since: their ids and when.' },
            after_cursor: { type: 'string', description: 'Pass it as `cursor` to read on.' },
            end_of_stream: { type: 'boolean', description: 'Whether this page reached the latest change.' },
            end_time: { type: 'integer', description: 'UNIX seconds: the changes up to this time are in the pages read so far (when end_of_stream).' },
          })),
          list: false,
        };
      }
      default: break;
    }
    return undefined;
  };

  /** The data of the route's success, or undefined when the route records do not say (the caller keeps a free-form `data`). */
  return (r: RouteRecord): ResponseData | undefined => {
    const found = data(r);
    if (!found) return undefined;
    return { ...found, example: found.list ? [exampleOf(found.schema, 'data', components)] : exampleOf(found.schema, 'data', components) };
  };
}
