/**
 * Races on unique names: parallel creates of one ticket status or priority name make one row (a
 * unique key), and the losers of parallel status, priority or ticket tag creates get the field's own message.
 */
import { TicketPriority, TicketStatus, TicketTag } from '../../src/db/models';
import { UniqueConstraintError } from 'sequelize';
import { sequelize } from '../../src/db/sequelize';
import * as priorityNames from '../../migrations/037_ticket_priority_names';
import { unique, useApi } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';

const api = useApi();
const TAKEN = 'The name has already been taken.';

async function race(path: string, n: number, body: Record<string, unknown>) {
  const results = await Promise.all(Array.from({ length: n }, () => api.post(path, body)));
  const ok = results.filter((r) => r.status === 200);
  for (const r of results.filter((x) => x.status !== 200)) expectError(r, 422, TAKEN);
  return ok.length;
}

describe('unique names under races', () => {
  it('30 parallel creates of one status name: one row, the others 422 naming the name', async () => {
    const name = unique('Status ');
    expect(await race('/api/ticket/status', 30, { name })).toBe(1);
    expect(await TicketStatus.count({ where: { name } })).toBe(1);
  });

  it('a duplicate status name is refused on create and update, case-insensitively', async () => {
    const name = unique('Waiting ');
    const first = expectSuccess(await api.post('/api/ticket/status', { name }), 'Successfully created new status!');
    expectError(await api.post('/api/ticket/status', { name: name.toUpperCase() }), 422, TAKEN);
    const other = expectSuccess(await api.post('/api/ticket/status', { name: unique('Other ') }), 'Successfully created new status!');
    expectError(await api.put(`/api/ticket/status/${other.id}`, { name }), 422, TAKEN);
    expectSuccess(await api.put(`/api/ticket/status/${first.id}`, { name, colour: '#000000' }), 'Successfully updated the status!');
  });

  it('priority names too: 20 parallel creates make one row; a duplicate is refused on create and update', async () => {
    const name = unique('Priority ');
    expect(await race('/api/ticket/priority', 20, { name })).toBe(1);
    expect(await TicketPriority.count({ where: { name } })).toBe(1);
    expectError(await api.post('/api/ticket/priority', { name: name.toLowerCase() }), 422, TAKEN);
    const other = expectSuccess(await api.post('/api/ticket/priority', { name: unique('Other ') }), 'Successfully created new priority!');
    expectError(await api.put(`/api/ticket/priority/${other.id}`, { name }), 422, TAKEN);
    expectSuccess(await api.put(`/api/ticket/priority/${other.id}`, { colour: '#000000' }), 'Successfully updated the priority!');
  });

  it('migration 037 gives priorities that share a name their id before the unique key', async () => {
    const qi = sequelize().getQueryInterface();
    await qi.removeIndex('ticket_priorities', 'ticket_priorities_name_unique');
    const name = unique('Shared ');
    const [first, second] = await TicketPriority.bulkCreate([{ name, colour: '#ffffff', order: 90 }, { name: name.toUpperCase(), colour: '#ffffff', order: 91 }]);
    await priorityNames.up(qi);
    expect((await TicketPriority.findAll({ where: { id: [first.id, second.id] }, order: [['id', 'ASC']] })).map((p) => p.name)).toEqual([name, `${name.toUpperCase()} (${second.id})`]);
    await expect(TicketPriority.create({ name, colour: '#ffffff', order: 92 })).rejects.toBeInstanceOf(UniqueConstraintError);
  });

  it('20 parallel ticket tag creates: one row, the others get the name field\'s message', async () => {
    const name = unique('Tag ');
    expect(await race('/api/ticket/tag', 20, { name })).toBe(1);
    expect(await TicketTag.count({ where: { name } })).toBe(1);
  });
});
