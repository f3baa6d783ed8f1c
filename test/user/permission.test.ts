import { Permission } from '../../src/db/models';
import { PERMISSIONS } from '../../src/seed/seed';
import { useApi } from '../helpers/app';
import { countWarm } from '../helpers/queries';
import { expectError, expectList, expectNotFound } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/user/permission';

describe('GET /api/user/permission', () => {
  it('lists the seeded permissions with slug flags', async () => {
    const res = await api.get(BASE, { limit: 1000 });
    const data = expectList(res);
    expect(res.body.count).toBe(PERMISSIONS.length);
    expect(data).toHaveLength(PERMISSIONS.length);
    for (const [module, , name, actions] of PERMISSIONS) {
      const item = data.find((p) => p.name === name);
      expect(item).toEqual({
        id: expect.any(Number), inherit_id: null, module_id: module, name,
        slug: { view: actions.includes('v') ? 1 : 0, create: actions.includes('c') ? 1 : 0, update: actions.includes('u') ? 1 : 0, delete: actions.includes('d') ? 1 : 0 },
        description: expect.any(String), created_at: expect.any(Number), updated_at: expect.any(Number),
      });
    }
  });

  it('pages and sorts', async () => {
    const all = expectList(await api.get(BASE, { limit: 1000 }));
    const page = await api.get(BASE, { start: 3, limit: 2 });
    expect(expectList(page).map((p) => p.id)).toEqual(all.slice(2, 4).map((p) => p.id));
    expect(page.body.count).toBe(all.length);
    const byModule = expectList(await api.get(BASE, { order_column: 'module_id', order_direction: 'desc', limit: 1000 })).map((p) => p.module_id);
    expect(byModule).toEqual([...byModule].sort((a, b) => b - a));
    expectError(await api.get(BASE, { order_column: 'code' }), 422, 'The selected order column is invalid.');
  });

  it('runs the same number of queries for limit=1 and limit=50', async () => {
    const measure = async (limit: number) => (await countWarm(async () => api.get(BASE, { limit }))).queries.filter((q) => !/api_tokens|ip_bans/.test(q));
    await api.get(BASE);
    expect((await measure(50)).length).toBe((await measure(1)).length);
  });
});

describe('GET /api/user/permission/{id}', () => {
  it('shows a permission', async () => {
    const p = (await Permission.findOne({ where: { code: 'core.settings' } }))!;
    const res = await api.get(`${BASE}/${p.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'success', message: null,
      data: {
        id: p.id, inherit_id: null, module_id: 1, name: 'Core Settings', slug: { view: 1, create: 0, update: 1, delete: 0 },
        description: p.description, created_at: p.created_at, updated_at: p.updated_at,
      },
    });
  });

  it('404', async () => {
    expectNotFound(await api.get(`${BASE}/999999`), 'permission');
  });
});

describe('permissions are read-only', () => {
  it.each([
    ['post', BASE],
    ['put', `${BASE}/1`],
    ['del', `${BASE}/1`],
  ] as const)('%s %s → 405', async (method, path) => {
    const res = await (method === 'del' ? api.del(path) : api[method](path, { name: 'x' }));
    expect(res.status).toBe(405);
    expect(res.body).toMatchObject({ status: 'error', data: null });
    expect(await Permission.count({ where: { name: 'x' } })).toBe(0);
  });
});
