/**
 * The conventions every resource keeps, checked for every resource the API serves: the table is
 * the route records (src/http/routes.ts), so a new resource joins by being declared. Per resource:
 * 404 with its label (show, update, delete, also through method override, also for a malformed
 * id), 405 with `Allow` for a method it does not offer, 422 in the spec's wording for an empty
 * create, and on lists: the envelope with `count`, paging, ordering checked against the list of
 * sortable columns, `lang`, and a clamped `limit`.
 */
import request from 'supertest';
import type { ObjectSchema } from 'joi';
import { allRoutes, type RouteRecord } from '../src/http/routes';
import type { ResourceDef } from '../src/http/resource';
import { sequelize } from '../src/db/sequelize';
import { useApi } from './helpers/app';
import { expectError, expectList, expectNotFound } from './helpers/envelope';

const api = useApi();

interface ResourceRoutes {
  base: string;
  label: string;
  def: ResourceDef<any, any>;
  routes: RouteRecord[];
}

/** Route records grouped by resource (nested resources, whose path has parameters, are left to their own tests). */
function resources(): ResourceRoutes[] {
  const byBase = new Map<string, ResourceRoutes>();
  for (const r of allRoutes()) {
    if (!r.resource || !r.label) continue;
    const def = r.resource as ResourceDef<any, any>;
    if (def.path.includes(':')) continue;
    const base = r.path.replace(/\/:id(\/.*)?$/, '');
    const entry = byBase.get(base) ?? { base, label: r.label, def, routes: [] };
    entry.routes.push(r);
    byBase.set(base, entry);
  }
  return [...byBase.values()];
}

const has = (res: ResourceRoutes, action: string) => res.routes.some((r) => r.action === action);

/** The first field a schema requires, in its declared order (joi reports the first problem). */
function firstRequired(schema: ObjectSchema | undefined): string | undefined {
  const keys = (schema?.describe().keys ?? {}) as Record<string, { flags?: { presence?: string } }>;
  return Object.entries(keys).find(([, d]) => d.flags?.presence === 'required')?.[0];
}

/** A list parameter the list cannot do without (the messages of one ticket: `ticket_id`), if any. */
function requiredListParam(def: ResourceDef<any, any>): string | undefined {
  const schemas: Array<[string, any]> = [...Object.entries(def.filters ?? {}).map(([k, f]) => [k, f.schema] as [string, any]), ...Object.entries(def.listParams ?? {})];
  return schemas.find(([, schema]) => schema.describe().flags?.presence === 'required')?.[0];
}

const MISSING_ID = 4294967295;

// The app (and so the route records) exists once useApi's beforeAll ran; the table is built then.
const table = () => resources();

describe('the route records', () => {
  it('cover every area and the resources of the spec', () => {
    const paths = allRoutes().map((r) => `${r.method} ${r.path}`);
    for (const expected of [
      'GET /api/core/brand', 'POST /api/core/ipban', 'DELETE /api/core/spamrule/:id', 'GET /api/core/settings',
      'GET /api/user/user/:id', 'PUT /api/user/operator/:id', 'GET /api/user/usergroup', 'GET /api/user/operatorgroup/:id',
      'GET /api/ticket/department',
    ]) expect(paths).toContain(expected);
    expect(new Set(paths).size).toBe(paths.length);
  });
});

describe('every resource', () => {
  it('answers an unknown id with 404 and its label, on every item route', async () => {
    const checked: string[] = [];
    for (const res of table()) {
      const item = `${res.base}/${MISSING_ID}`;
      if (has(res, 'show')) {
        expectNotFound(await api.get(item), res.label);
        expectNotFound(await api.get(`${res.base}/not-a-number`), res.label);
      }
      if (has(res, 'update')) {
        expectNotFound(await api.put(item, {}), res.label);
        expectNotFound(await request(api.app).post(item).auth(api.token, 'x').set('X-HTTP-Method-Override', 'PUT').type('form').send(''), res.label);
      }
      if (has(res, 'delete')) {
        expectNotFound(await api.del(item), res.label);
        expectNotFound(await request(api.app).post(item).auth(api.token, 'x').set('X-HTTP-Method-Override', 'DELETE'), res.label);
      }
      checked.push(res.base);
    }
    expect(checked.length).toBeGreaterThanOrEqual(15);
  });

  it('answers a method it does not offer with 405 and Allow', async () => {
    for (const res of table()) {
      const patch = await request(api.app).patch(`${res.base}/1`).auth(api.token, 'x');
      const itemMethods = res.routes.filter((r) => r.path.endsWith('/:id')).map((r) => r.method);
      if (itemMethods.length) {
        expectError(patch, 405, /^The PATCH method is not supported here\./);
        expect(patch.headers.allow.split(', ').sort()).toEqual([...new Set(itemMethods)].sort());
      }
      if (!has(res, 'create') && has(res, 'list')) {
        const post = await api.post(res.base, {});
        expectError(post, 405, /^The POST method is not supported here\./);
        expect(post.headers.allow).toBe('GET');
      }
    }
  });

  it('answers an empty create with 422 naming the first required field', async () => {
    let checked = 0;
    for (const res of table()) {
      const required = firstRequired(res.def.createSchema);
      if (!has(res, 'create') || !required) continue;
      expectError(await api.post(res.base, {}), 422, `The ${required.replace(/_/g, ' ')} field is required.`);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(8);
  });

  it('lists in the envelope with count, pages, orders by its sortable columns only, and clamps limit', async () => {
    for (const res of table()) {
      if (!has(res, 'list')) continue;
      const required = requiredListParam(res.def);
      if (required) {
        // Such a list is checked by its own tests; here, that it says what it needs.
        expectError(await api.get(res.base), 422, `The ${required.replace(/_/g, ' ')} field is required.`);
        continue;
      }
      const all = await api.get(res.base, { limit: 1000 });
      const data = expectList(all);
      expect(all.body.count).toBeGreaterThanOrEqual(data.length);
      const one = expectList(await api.get(res.base, { limit: 1 }));
      expect(one.length).toBe(Math.min(1, all.body.count));
      expect(expectList(await api.get(res.base, { limit: 1e9 })).length).toBe(data.length);
      if (data.length >= 2) {
        const second = expectList(await api.get(res.base, { start: 2, limit: 1 }));
        expect(second[0].id).toBe(data[1].id);
        // The first in descending order is the last in ascending order (which may be past the
        // 1,000 read above: a worker's database can hold more).
        const desc = expectList(await api.get(res.base, { order_direction: 'desc', limit: 1 }));
        const last = expectList(await api.get(res.base, { start: all.body.count, limit: 1 }));
        expect(desc[0].id).toBe(last[0].id);
        expect(desc[0].id).toBeGreaterThanOrEqual(Math.max(...data.map((d) => d.id)));
      }
      for (const column of res.def.sortable ?? []) expectList(await api.get(res.base, { order_column: column, order_direction: 'desc' }));
      expectError(await api.get(res.base, { order_column: 'password' }), 422, 'The selected order column is invalid.');
      expectError(await api.get(res.base, { order_column: 'id; DROP TABLE users' }), 422, 'The selected order column is invalid.');
      expectError(await api.get(res.base, { start: 0 }), 422, 'The start must be at least 1.');
      expectError(await api.get(res.base, { order_direction: 'up' }), 422, 'The selected order direction is invalid.');
      expectList(await api.get(res.base, { lang: 'fr' }));
    }
  });

  it('shows what it lists, in the envelope of one record', async () => {
    for (const res of table()) {
      if (!has(res, 'list') || !has(res, 'show') || requiredListParam(res.def)) continue;
      const [first] = expectList(await api.get(res.base, { limit: 1 }));
      if (!first) continue;
      const shown = await api.get(`${res.base}/${first.id}`);
      expect(shown.status).toBe(200);
      expect(shown.body.status).toBe('success');
      const data = Array.isArray(shown.body.data) ? shown.body.data[0] : shown.body.data;
      expect(data.id).toBe(first.id);
    }
  });
});

describe('the models', () => {
  // The connection runs without Sequelize's type cast (src/db/sequelize.ts), which parses these
  // types only: a column of one of them would be read unparsed.
  it('have no column of a type that needs Sequelize to parse it (DATETIME, DATE, GEOMETRY, JSON, DECIMAL)', () => {
    const parsed = /^(DATETIME|DATE|GEOMETRY|JSON|DECIMAL)\b/;
    const offending = Object.values(sequelize().models).flatMap((model) => Object.entries(model.getAttributes())
      .map(([name, a]) => `${model.name}.${name}: ${(a.type as { toSql(): string }).toSql()}`)
      .filter((line) => parsed.test(line.split(': ')[1])));
    expect(Object.keys(sequelize().models).length).toBeGreaterThan(40);
    expect(offending).toEqual([]);
  });
});
