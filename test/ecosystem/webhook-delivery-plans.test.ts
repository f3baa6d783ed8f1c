/**
 * A webhook's delivery log in each order it can be sorted by, and by a status, reads a range of an
 * index led by the webhook (migration 058), never a sort of the webhook's deliveries (EXPLAIN of
 * the page statement the list runs); its count within the webhook is the counters' (migration 057),
 * of one status too (066).
 */
import { randomUUID } from 'node:crypto';
import { capture } from '../../bench/capture';
import { DomainEvent, Webhook } from '../../src/db/models';
import { execute } from '../../src/db/select';
import { nowSec, useApi } from '../helpers/app';
import { expectList } from '../helpers/envelope';
import { builderPagePlan } from '../helpers/queries';

const api = useApi();
const ids = (rows: Array<{ id: number }>) => rows.map((r) => r.id);
const DELIVERIES = 400;
let hook: Webhook;

beforeAll(async () => {
  hook = await Webhook.create({ url: 'https://hooks.example.com/plans', events: JSON.stringify(['user.created']), secret: randomUUID(), enabled: 0 } as any);
  const event = await DomainEvent.create({ name: 'user.created', payload: '{}', created_at: nowSec() } as any);
  // Enough deliveries that a sort of them would cost more than reading an index's range; one in forty failed.
  await execute(`INSERT INTO webhook_deliveries (webhook_id, event_id, uuid, event_name, status, attempts, created_at, updated_at)
    SELECT :hook, :event, UUID(), 'user.created', IF(seq MOD 40 = 0, 'failed', 'succeeded'), 1 + seq MOD 3, :at - seq, :at + seq MOD 7
    FROM seq_1_to_${DELIVERIES}`, { hook: hook.id, event: event.id, at: nowSec() }, undefined);
});

/** The list's page statement for `query`, its EXPLAIN, and the list's count. */
async function plan(query: Record<string, unknown>) {
  const { result, statements } = await capture(() => api.get(`/api/core/webhook/${hook.id}/delivery`, { limit: 5, ...query }));
  expectList(result);
  const rows = await builderPagePlan(statements, 'webhook_deliveries');
  const counted = statements.some((s) => /COUNT\(\*\)[^;]*FROM `webhook_deliveries`/.test(s.sql));
  return { rows, count: result.body.count as number, counted };
}

it('reads each order of a webhook\'s deliveries, both ways, from an index led by the webhook, and counts them from the counters', async () => {
  for (const column of ['id', 'status', 'attempts', 'event_id', 'created_at', 'updated_at']) {
    for (const direction of ['asc', 'desc']) {
      const { rows, count, counted } = await plan({ order_column: column, order_direction: direction });
      expect(rows).toHaveLength(1);
      const [row] = rows;
      expect({ column, direction, key: row.key, type: row.type, filesort: /filesort/.test(row.Extra ?? '') })
        .toEqual({ column, direction, key: column === 'id' ? 'webhook_deliveries_webhook_id_id' : `webhook_deliveries_webhook_id_${column}`, type: expect.stringMatching(/^(range|ref)$/), filesort: false });
      expect({ count, counted }).toEqual({ count: DELIVERIES, counted: false });
    }
  }
});

it('reads one status of the webhook\'s deliveries from its range, and counts them from the counters', async () => {
  const { rows, count, counted } = await plan({ status: 'failed' });
  expect(rows).toHaveLength(1);
  expect({ key: rows[0].key, filesort: /filesort/.test(rows[0].Extra ?? '') }).toEqual({ key: 'webhook_deliveries_webhook_id_status', filesort: false });
  expect({ count, counted }).toEqual({ count: DELIVERIES / 40, counted: false });
  // The status most deliveries have (whose page the optimiser may read from another of the webhook's indexes).
  const most = await plan({ status: 'succeeded' });
  expect({ count: most.count, counted: most.counted }).toEqual({ count: DELIVERIES - DELIVERIES / 40, counted: false });
});

it('reads the page after a delivery (after_id) near the end of a date order from the date\'s index range, counting the whole log', async () => {
  const [middle] = ids(expectList(await api.get(`/api/core/webhook/${hook.id}/delivery`, { order_column: 'created_at', start: DELIVERIES - 10, limit: 1 })));
  const { rows, count } = await plan({ order_column: 'created_at', order_direction: 'asc', after_id: middle });
  expect(rows).toHaveLength(1);
  expect({ key: rows[0].key, type: rows[0].type, filesort: /filesort/.test(rows[0].Extra ?? '') })
    .toEqual({ key: 'webhook_deliveries_webhook_id_created_at', type: 'range', filesort: false });
  expect(count).toBe(DELIVERIES);
});
