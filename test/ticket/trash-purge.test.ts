/**
 * The trash's retention (TICKET_TRASH_RETENTION_DAYS, 30 by default as SupportPal's): purgeTrash
 * deletes for good the tickets in the trash longer than it, with their messages and the tickets
 * merged into them, a `ticket.deleted` and the export's tombstones each, and keeps every counter
 * exact (as migration 049's recount rebuilds them). A ticket trashed since, restored, or never
 * trashed stays.
 */
import { QueryTypes } from 'sequelize';
import { config } from '../../src/config';
import { DomainEvent } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { schedulerIdOf } from '../../src/queue/jobs';
import { purgeTrash, trashPurgeJob } from '../../src/ticket/trashPurge';
import { schedulerSpec } from '../../src/wiring';
import { expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { nowSec, unique, useApi } from '../helpers/app';
import { counterState, recount } from './counterState';
import { ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
let ctx: TicketContext;
// What earlier files of this worker's database left in the trash long ago goes first.
beforeAll(async () => { ctx = await ticketContext(); await purgeTrash({ maxBatches: 1000 }); });
const f = ticketFactories(api, () => ctx);
const DAY = 86400;

const select = <T extends object>(sql: string, replacements: Record<string, unknown>) => sequelize().query<T>(sql, { replacements, type: QueryTypes.SELECT });
const trash = async (id: number) => expect((await api.del(`/api/ticket/ticket/${id}`)).body.message).toBe('Successfully moved the ticket to trash!');
/** Puts the ticket's time in the trash `days` back. */
const trashedAgo = (id: number, days: number) => sequelize().query('UPDATE tickets SET deleted_at = :at WHERE id = :id', { replacements: { id, at: nowSec() - days * DAY } });
const existing = async (ids: number[]) => (await select<{ id: number }>('SELECT id FROM tickets WHERE id IN (:ids) ORDER BY id', { ids })).map((r) => r.id);
const messagesOf = async (ids: number[]) => Number((await select<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_messages WHERE ticket_id IN (:ids) OR original_ticket_id IN (:ids)', { ids }))[0].n);
const trashCount = async () => (await api.get('/api/ticket/ticket', { trashed: 1, limit: 1 })).body.count as number;

it('is scheduled hourly, and deletes nothing with a retention of 0', async () => {
  expect(schedulerSpec().jobs.filter((j) => j.schedule).map(schedulerIdOf)).toContain(schedulerIdOf(trashPurgeJob));
  const ticket = await f.ticket();
  await trash(ticket.id);
  await trashedAgo(ticket.id, 4000);
  const retention = config().ticketTrashRetentionSeconds;
  config().ticketTrashRetentionSeconds = 0;
  try {
    expect(await purgeTrash()).toBe(0);
    expect(await existing([ticket.id])).toEqual([ticket.id]);
  } finally {
    config().ticketTrashRetentionSeconds = retention;
  }
  expect(await purgeTrash()).toBe(1);
});

it('deletes the tickets trashed past the retention with their messages and merged tickets, events and tombstones; counters stay exact', async () => {
  const op = await f.operator();
  const field = expectSuccess(await api.post('/api/ticket/customfield', { name: unique('Trash field'), type: 5, options: [{ value: 'One' }, { value: 'Two' }] }), 'Successfully created new custom field!');
  const [option] = expectList(await api.get(`/api/ticket/customfield/${field.id}/option`, { order_column: 'order' })).map((o) => o.id as number);
  const old = await f.ticket({ assignedto: [op.id], customfield: { [field.id]: option } });
  await f.message(old);
  const older = await f.ticket();
  const target = await f.ticket();
  const source = await f.ticket();
  expectSuccess(await api.post(`/api/ticket/ticket/${target.id}/merge`, { ids: [source.id] }), 'Successfully updated the ticket!');
  const recent = await f.ticket({ assignedto: [op.id] });
  const restored = await f.ticket();
  const active = await f.ticket({ assignedto: [op.id] });
  for (const t of [old, older, target, recent, restored]) await trash(t.id);
  await trashedAgo(old.id, 31);
  await trashedAgo(older.id, 400);
  await trashedAgo(target.id, 45);
  await trashedAgo(recent.id, 29);
  await trashedAgo(restored.id, 60);
  expectSuccess(await api.post(`/api/ticket/ticket/${restored.id}/restore`, {}), 'Successfully restored the ticket!');
  const gone = [old.id, older.id, target.id, source.id].sort((a, b) => a - b);
  const all = [...gone, recent.id, restored.id, active.id];
  expect(await messagesOf(gone)).toBeGreaterThanOrEqual(4);
  expect(await select('SELECT owner_id FROM custom_field_values WHERE field_id = :field', { field: field.id })).toEqual([{ owner_id: old.id }]);
  const trashedBefore = await trashCount();
  const eventsAfter = (await DomainEvent.max<number, DomainEvent>('id')) ?? 0;

  // One batch of one trashed ticket first: the rest waits for the next run, which takes the other
  // two one batch at a time.
  const first = await purgeTrash({ batch: 1, maxBatches: 1 });
  expect([1, 2]).toContain(first);
  expect(first + await purgeTrash({ batch: 1 })).toBe(4);
  expect(await existing(all)).toEqual([recent.id, restored.id, active.id].sort((a, b) => a - b));
  expect(await messagesOf(gone)).toBe(0);
  expect(await select('SELECT owner_id FROM custom_field_values WHERE field_id = :field', { field: field.id })).toEqual([]);
  for (const id of gone) expectNotFound(await api.get(`/api/ticket/ticket/${id}`), 'ticket');
  expect(await trashCount()).toBe(trashedBefore - 3);
  const assigned = await api.get('/api/ticket/ticket', { assigned: op.id });
  expect(assigned.body.data.map((t: { id: number }) => t.id)).toEqual([active.id]);

  const events = await DomainEvent.findAll({ where: { name: 'ticket.deleted' }, order: [['id', 'ASC']] });
  expect(events.filter((e) => e.id > eventsAfter).map((e) => JSON.parse(e.payload).ticketId).sort((a, b) => a - b)).toEqual(gone);
  const tombstones = await select<{ resource: string; record_id: number }>("SELECT resource, record_id FROM export_tombstones WHERE resource = 'tickets' AND record_id IN (:gone) ORDER BY record_id", { gone });
  expect(tombstones.map((t) => t.record_id)).toEqual(gone);

  const exact = await counterState();
  await recount(sequelize().getQueryInterface());
  expect(await counterState()).toEqual(exact);
  expect(await purgeTrash()).toBe(0);
});

it('finds the old trash by a range of an index that leads with deleted_at', async () => {
  const [plan] = await select<{ type: string; key: string }>('EXPLAIN SELECT id FROM tickets WHERE deleted_at < :before LIMIT 50 FOR UPDATE', { before: nowSec() - 30 * DAY });
  expect(plan.type).toBe('range');
  const [index] = await select<{ Column_name: string }>('SHOW INDEX FROM tickets WHERE Key_name = :key AND Seq_in_index = 1', { key: plan.key });
  expect(index.Column_name).toBe('deleted_at');
});
