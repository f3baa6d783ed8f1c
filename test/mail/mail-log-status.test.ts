/**
 * The mail log's `status` filter matches exactly the entries that show that status
 * (src/core/mail.ts: statusOf): the delivery record's status when it says more than `queued`,
 * else the outbox entry's (failed, processed: sent, or queued), so every entry is under one status
 * and under the one it shows, whichever of the two tables has moved first.
 */
import { MailDelivery, OutboxEntry } from '../../src/db/models';
import { nowSec, useApi, unique } from '../helpers/app';
import { expectList } from '../helpers/envelope';

const api = useApi();
const STATUSES = ['queued', 'sent', 'skipped', 'bounced', 'failed'] as const;

it('filters each status to the entries that show it, one status an entry', async () => {
  const type = unique('status.mail').slice(-40);
  const at = nowSec();
  /** [the entry's processed_at / failed_at, its delivery record's status (none: no record)], and the status it shows. */
  const cases: Array<[{ processed?: boolean; failed?: boolean }, string | null, string]> = [
    [{}, null, 'queued'],
    [{ processed: true }, null, 'sent'],
    [{ failed: true }, null, 'failed'],
    [{}, 'queued', 'queued'],
    [{ processed: true }, 'queued', 'sent'],
    [{ failed: true }, 'queued', 'failed'],
    // The record is written before the entry is marked: it decides.
    [{}, 'sent', 'sent'],
    [{ failed: true }, 'sent', 'sent'],
    [{}, 'failed', 'failed'],
    [{ processed: true }, 'failed', 'failed'],
    [{ processed: true }, 'bounced', 'bounced'],
    [{ processed: true }, 'skipped', 'skipped'],
  ];
  const expected = new Map<number, string>();
  for (const [entry, delivery, shows] of cases) {
    const row = await OutboxEntry.create({
      job_key: unique('k').slice(-16), queue: 'mail', name: type, payload: '{}', created_at: at,
      processed_at: entry.processed ? at : null, failed_at: entry.failed ? at : null,
    } as any);
    if (delivery) await MailDelivery.create({ outbox_id: row.id, status: delivery, attempts: 1, created_at: at, updated_at: at } as any);
    expected.set(row.id, shows);
  }
  const all = expectList(await api.get('/api/core/mail', { type, limit: 100 }));
  expect(new Map(all.map((e: any) => [e.id, e.status]))).toEqual(expected);
  for (const status of STATUSES) {
    const res = await api.get('/api/core/mail', { type, status, limit: 100 });
    const ids = expectList(res).map((e: any) => e.id).sort((a: number, b: number) => a - b);
    expect({ status, ids }).toEqual({ status, ids: [...expected].filter(([, s]) => s === status).map(([id]) => id).sort((a, b) => a - b) });
    expect(res.body.count).toBe(ids.length);
  }
});
