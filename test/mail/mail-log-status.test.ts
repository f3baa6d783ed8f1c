/**
 * The mail log's `status` filter matches exactly the entries that show that status
 * (src/core/mail.ts: statusOf): the delivery record's status when it says more than `queued`,
 * else the outbox entry's (failed, processed: sent, or queued), so every entry is under one status
 * and under the one it shows, whichever of the two tables has moved first. Each status's count, and
 * the page of `sent` (most of the log), read as many rows whatever the number of sent entries; a
 * type's page reads its own entries, not the older ones of the log.
 */
import { capture, type Statement } from '../../bench/capture';
import { MailDelivery, OutboxEntry } from '../../src/db/models';
import { select } from '../../src/db/select';
import { sequelize } from '../../src/db/sequelize';
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
  // A status of parts read apart and merged (failed: its delivery records' and the outbox's own),
  // paged one entry at a time, by `start` and by `after_id`, in each order: every entry once, in order.
  const failed = [...expected].filter(([, s]) => s === 'failed').map(([id]) => id).sort((a, b) => a - b);
  expect(failed.length).toBe(4);
  for (const order_column of ['id', 'created_at']) {
    for (const order_direction of ['asc', 'desc']) {
      const want = order_direction === 'asc' ? failed : [...failed].reverse();
      const byStart: number[] = [];
      const byAfter: number[] = [];
      for (let start = 1; start <= failed.length + 1; start++) {
        const page = expectList(await api.get('/api/core/mail', { type, status: 'failed', order_column, order_direction, start, limit: 1 }));
        byStart.push(...page.map((e: any) => e.id));
        const after = expectList(await api.get('/api/core/mail', {
          type, status: 'failed', order_column, order_direction, limit: 1, ...(byAfter.length ? { after_id: byAfter[byAfter.length - 1] } : {}),
        }));
        byAfter.push(...after.map((e: any) => e.id));
      }
      expect({ order_column, order_direction, byStart, byAfter }).toEqual({ order_column, order_direction, byStart: want, byAfter: want });
    }
  }
});

/** The entries of `type` of each status by statusOf's rules, written again as one CASE of a join (the check's own statement). */
async function statusesOf(type: string): Promise<Record<string, number>> {
  const rows = await select<{ status: string; n: number | bigint }>(`SELECT CASE
      WHEN d.status IS NOT NULL AND d.status <> 'queued' THEN d.status
      WHEN o.failed_at IS NOT NULL THEN 'failed' WHEN o.processed_at IS NOT NULL THEN 'sent' ELSE 'queued' END AS status, COUNT(*) AS n
    FROM outbox o LEFT JOIN mail_deliveries d ON d.outbox_id = o.id WHERE o.queue = 'mail' AND o.name = :type GROUP BY 1`, { type });
  return Object.fromEntries(STATUSES.map((st) => [st, Number(rows.find((r) => r.status === st)?.n ?? 0)]));
}

/** The index and table rows a statement reads (InnoDB's handler reads), run again on a connection of its own. */
async function rowsRead(statement: Statement): Promise<number> {
  return sequelize().transaction(async (transaction) => {
    const reads = async () => (await select<{ Value: string }>("SHOW SESSION STATUS LIKE 'Handler_read%'", [], { transaction }))
      .reduce((sum, r) => sum + Number(r.Value), 0);
    const before = await reads();
    await select(statement.sql, statement.params ?? [], { transaction });
    return (await reads()) - before;
  });
}

/** A list request's page statement (the one with a LIMIT: its count has none). */
const pageOf = (statements: Statement[]) => statements.find((st) => /\bLIMIT\b/.test(st.sql));

/**
 * `n` entries of `type` as the mail worker leaves them, written by statements: sent, each with its
 * delivery record, or (`others`) of the other statuses in turn (queued, failed, skipped, bounced).
 * The tables' statistics are read again after, so the plans measured next are those of the rows
 * as they are (InnoDB recalculates them in the background, at a time of its own).
 */
async function mailEntries(type: string, n: number, others = false): Promise<void> {
  const at = nowSec();
  const key = unique('k');
  await select(`INSERT INTO outbox (job_key, queue, name, payload, published_at, processed_at, created_at)
    SELECT SUBSTR(MD5(CONCAT(:key, seq)), 1, 16), 'mail', :type, '{}', :at, IF(:others AND seq % 4 = 0, NULL, :at), :at FROM seq_1_to_${n}`, { key, type, at, others });
  await select(`INSERT INTO mail_deliveries (outbox_id, status, attempts, sent_at, created_at, updated_at)
    SELECT o.id, IF(:others, ELT(seq % 4, 'failed', 'skipped', 'bounced'), 'sent'), 1, :at, :at, :at
    FROM seq_1_to_${n} JOIN outbox o ON o.job_key = SUBSTR(MD5(CONCAT(:key, seq)), 1, 16) WHERE NOT (:others AND seq % 4 = 0)`, { key, at, others });
  await select('ANALYZE TABLE outbox, mail_deliveries');
}

it('counts each status, and pages the sent, reading as many rows however many entries are sent', async () => {
  const type = unique('status.bulk').slice(-40);
  const at = nowSec();
  // Entries of every other status, of another type, as a log holds them (the other test files'
  // are in this database too): each count reads its range of them, whatever the type. And older
  // sent ones of a third type, which a page of this type's (the newest) never reads.
  await mailEntries(unique('status.other').slice(-40), 1000, true);
  await mailEntries(unique('status.older').slice(-40), 20000);
  await mailEntries(type, 3000);
  // A few of every other status, and sent ones of both kinds.
  for (const [entry, delivery] of [
    [{}, null], [{}, 'queued'], [{ failed: true }, null], [{ failed: true }, 'queued'], [{}, 'failed'], [{ processed: true }, 'failed'],
    [{ processed: true }, 'skipped'], [{ processed: true }, 'bounced'], [{ processed: true }, null], [{ failed: true }, 'sent'],
  ] as Array<[{ processed?: boolean; failed?: boolean }, string | null]>) {
    const row = await OutboxEntry.create({
      job_key: unique('k').slice(-16), queue: 'mail', name: type, payload: '{}', created_at: at,
      processed_at: entry.processed ? at : null, failed_at: entry.failed ? at : null,
    } as any);
    if (delivery) await MailDelivery.create({ outbox_id: row.id, status: delivery, attempts: 1, created_at: at, updated_at: at } as any);
  }
  /**
   * Each status's count as listed (checked against statusesOf), the rows its count and its page
   * read, and those its page of every type reads (the newest first: this type's are the newest).
   */
  const measure = async () => {
    const truth = await statusesOf(type);
    const out: Record<string, { count: number; countReads: number; pageReads: number; anyTypeReads: number }> = {};
    for (const status of STATUSES) {
      const { result: res, statements } = await capture(async () => api.get('/api/core/mail', { type, status, limit: 20 }));
      expect({ status, count: expectList(res).length && res.body.count }).toEqual({ status, count: truth[status] });
      const count = statements.find((st) => st.sql.includes('COUNT(*)') && !st.sql.includes('LIMIT'));
      const page = pageOf(statements);
      expect({ status, count: !!count, page: !!page }).toEqual({ status, count: true, page: true });
      const anyType = await capture(async () => expectList(await api.get('/api/core/mail', { status, order_direction: 'desc', limit: 20 })));
      out[status] = { count: truth[status], countReads: await rowsRead(count!), pageReads: await rowsRead(page!), anyTypeReads: await rowsRead(pageOf(anyType.statements)!) };
    }
    return out;
  };
  const before = await measure();
  expect(before.sent.count).toBe(3002);
  await mailEntries(type, 3000);
  const after = await measure();
  expect(after.sent.count).toBe(6002);
  for (const status of STATUSES) {
    // The other statuses' entries are the same: so are the rows their counts read, and sent's;
    // and the rows their pages read, of the type or not (a page read by its condition walked the
    // type's entries, or the log, from the newest until it had a page: all 3,010 of the type's
    // entries, since fewer than 20 have each of those statuses, and 3,000 more after).
    expect({ status, count: after[status].countReads - before[status].countReads }).toEqual({ status, count: 0 });
    if (status === 'sent') continue;
    expect({ status, page: after[status].pageReads - before[status].pageReads, anyType: after[status].anyTypeReads - before[status].anyTypeReads })
      .toEqual({ status, page: 0, anyType: 0 });
  }
  // The page of the sent reads its page's entries (a few rows each: the index, the entry, its
  // record), not every sent record (6,002 of the type after), nor the 20,000 older entries; nor
  // does the type's page, in either order.
  for (const { sent } of [before, after]) expect([sent.pageReads, sent.anyTypeReads].map((reads) => reads < 10 * 20)).toEqual([true, true]);
  for (const order_direction of ['asc', 'desc']) {
    const { statements } = await capture(async () => expectList(await api.get('/api/core/mail', { type, order_direction, limit: 20 })));
    expect({ order_direction, reads: await rowsRead(pageOf(statements)!) < 10 * 20 })
      .toEqual({ order_direction, reads: true });
  }
});
