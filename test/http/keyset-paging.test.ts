/**
 * `after_id` on the resource builder's lists (keyset paging, beyond the spec, as the ticket list
 * has it): the page after that record in the list's order, whatever the order column (equal values
 * and NULLs included), `count` the whole list's; a record outside the list's scope (another type
 * of person, another webhook's delivery) or none is a 422 and changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { DomainEvent, Organisation, User, Webhook, WebhookDelivery } from '../../src/db/models';
import { allRoutes } from '../../src/http/routes';
import { newEmail, nowSec, unique, useApi } from '../helpers/app';
import { expectError, expectList, expectSuccess } from '../helpers/envelope';

const api = useApi();
const ids = (rows: Array<{ id: number }>) => rows.map((r) => r.id);

/** Every page of `path` for `query`, `limit` at a time, each after the last record of the one before. */
async function walk(path: string, query: Record<string, unknown>, total: number) {
  const walked: number[] = [];
  let after: number | undefined;
  for (let i = 0; i <= total; i++) {
    const res = await api.get(path, { ...query, limit: 2, ...(after ? { after_id: after } : {}) });
    const page = ids(expectList(res));
    expect(res.body.count).toBe(total); // the count is the whole list's
    if (!page.length) break;
    walked.push(...page);
    after = page[page.length - 1];
  }
  return walked;
}

describe('after_id on the builder\'s lists', () => {
  it('walks a list in every order both ways, equal values and NULLs included, as the whole list reads', async () => {
    const brand = expectSuccess(await api.post('/api/core/brand', { name: unique('Keyset') }), 'Successfully created new brand!');
    const org = await Organisation.create({ name: unique('Keyset org'), brand_id: brand.id } as any);
    for (let i = 0; i < 5; i++) {
      // Two lastnames shared; two users in the organisation, three in none (NULL).
      await User.create({ type: 'user', brand_id: brand.id, firstname: 'Key', lastname: `Set ${i % 2}`, email: newEmail('keyset'), organisation_id: i % 3 === 0 ? org.id : null } as any);
    }
    for (const column of ['id', 'lastname', 'organisation_id', 'created_at']) {
      for (const direction of ['asc', 'desc']) {
        const query = { brand_id: brand.id, order_column: column, order_direction: direction };
        const all = ids(expectList(await api.get('/api/user/user', { ...query, limit: 100 })));
        expect(all).toHaveLength(5);
        expect({ column, direction, walked: await walk('/api/user/user', query, 5) }).toEqual({ column, direction, walked: all });
      }
    }
  });

  it('refuses a record that does not exist, or that is not of the list (an operator for the users, another webhook\'s delivery)', async () => {
    expectError(await api.get('/api/user/user', { after_id: 4_000_000_000 }), 422, 'The selected after id is invalid.');
    expectError(await api.get('/api/user/user', { after_id: 'x' }), 422, /after id/);
    const operator = await User.create({ type: 'operator', firstname: 'Not', lastname: 'A user', email: newEmail('keyset-op') } as any);
    expectError(await api.get('/api/user/user', { after_id: operator.id }), 422, 'The selected after id is invalid.');
    const next = await User.create({ type: 'operator', firstname: 'Next', lastname: 'Operator', email: newEmail('keyset-op') } as any);
    expect(ids(expectList(await api.get('/api/user/operator', { after_id: operator.id, limit: 100 })))).toEqual([next.id]);

    const hook = () => Webhook.create({ url: 'https://hooks.example.com/keyset', events: JSON.stringify(['user.created']), secret: randomUUID(), enabled: 0 } as any);
    const [one, two] = [await hook(), await hook()];
    const event = await DomainEvent.create({ name: 'user.created', payload: '{}', created_at: nowSec() } as any);
    const deliver = (h: Webhook) => WebhookDelivery.create({ webhook_id: h.id, event_id: event.id, uuid: randomUUID(), event_name: event.name, status: 'succeeded', attempts: 1 } as any);
    const [a, b, other] = [await deliver(one), await deliver(one), await deliver(two)];
    expect(ids(expectList(await api.get(`/api/core/webhook/${one.id}/delivery`, { after_id: a.id })))).toEqual([b.id]);
    expectError(await api.get(`/api/core/webhook/${one.id}/delivery`, { after_id: other.id }), 422, 'The selected after id is invalid.');
  });
});

describe('after_id on every list that takes it', () => {
  beforeAll(async () => {
    // Two records or more in lists the seed leaves with fewer (the seed's languages, statuses, roles... have them).
    for (let i = 0; i < 2; i++) {
      for (const [path, body] of [
        ['/api/core/brand', { name: unique('Keyset brand') }],
        ['/api/user/organisation', { name: unique('Keyset org') }],
        ['/api/user/user', { firstname: 'Key', lastname: unique('Set'), email: newEmail('keyset-all') }],
        ['/api/core/ipban', { ip: `10.77.${i}.${Math.floor(Math.random() * 250)}`, type: 1 }],
        ['/api/ticket/tag', { name: unique('Keyset tag') }],
        ['/api/selfservice/tag', { name: unique('Keyset tag') }],
      ] as const) {
        const res = await api.post(path, body);
        expect({ path, status: res.status }).toEqual({ path, status: 200 });
      }
    }
  });

  it('pages after a listed record in each sortable order, both ways, as far as the list goes', async () => {
    // Lists of one parent, or that need a parameter (a ticket's messages), are checked by their own tests.
    const needsParameter = (keys: Record<string, any>) => Object.values(keys).some((k) => k.flags?.presence === 'required');
    const lists = allRoutes().filter((r) => r.method === 'GET' && r.action === 'list' && !r.path.includes(':')
      && r.query?.describe().keys?.after_id && !needsParameter(r.query.describe().keys));
    expect(lists.length).toBeGreaterThan(20);
    const checked = new Set<string>();
    for (const route of lists) {
      const sortable: string[] = route.query!.describe().keys.order_column.allow;
      for (const column of sortable) {
        for (const direction of ['asc', 'desc']) {
          const query = { order_column: column, order_direction: direction };
          const all = ids(expectList(await api.get(route.path, { ...query, limit: 3 })));
          if (all.length < 2) continue;
          const after = await api.get(route.path, { ...query, limit: 2, after_id: all[0] });
          expect({ path: route.path, column, direction, status: after.status, body: after.status === 200 ? 'ok' : after.body })
            .toEqual({ path: route.path, column, direction, status: 200, body: 'ok' });
          expect({ path: route.path, column, direction, ids: ids(expectList(after)) }).toEqual({ path: route.path, column, direction, ids: all.slice(1, 3) });
          checked.add(route.path);
        }
      }
    }
    expect(checked.size).toBeGreaterThanOrEqual(10);
  });
});
