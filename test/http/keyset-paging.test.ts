/**
 * `after_id` on the resource builder's lists (keyset paging, beyond the spec, as the ticket list
 * has it): the page after that record in the list's order, whatever the order column (equal values
 * and NULLs included), `count` the whole list's; a record outside the list's scope (another type
 * of person, another webhook's delivery) or none is a 422 and changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { DomainEvent, Organisation, User, Webhook, WebhookDelivery } from '../../src/db/models';
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
