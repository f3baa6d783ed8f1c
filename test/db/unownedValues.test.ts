/**
 * Migration 073: custom field values that no ticket, user or organisation owns (a person's delete
 * left their tickets' values behind until deleteTicketsOf took them) go, with their grams and
 * option ids, and the values of records that exist stay; a ticket field's delete takes its option
 * counters' rows with it (they stayed at 0), and the migration removes those left before.
 */
import * as m073 from '../../migrations/073_unowned_custom_field_values';
import { CustomField } from '../../src/db/models';
import { execute, select } from '../../src/db/select';
import { sequelize } from '../../src/db/sequelize';
import { useApi, unique } from '../helpers/app';
import { expectList, expectSuccess } from '../helpers/envelope';
import { ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';

const api = useApi();
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);

beforeAll(async () => { ctx = await ticketContext(); });

const count = async (sql: string, values: unknown[]) => Number((await select<{ n: number }>(sql, values))[0].n);

/** Each table's rows of a field's values of `owner`: the values, their grams and their option ids. */
const held = async (fieldId: number, owner: number) => ({
  values: await count('SELECT COUNT(*) AS n FROM custom_field_values WHERE field_id = ? AND owner_id = ?', [fieldId, owner]),
  grams: await count('SELECT COUNT(*) AS n FROM custom_field_value_grams WHERE field_id = ? AND owner_id = ?', [fieldId, owner]),
  ids: await count('SELECT COUNT(*) AS n FROM custom_field_value_options WHERE field_id = ? AND owner_id = ?', [fieldId, owner]),
});

const counterRows = (fieldId: number) => count('SELECT COUNT(*) AS n FROM ticket_option_counts WHERE field_id = ?', [fieldId]);

const trigger = () => count("SELECT COUNT(*) AS n FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME = 'custom_fields_option_counts_delete'", []);

describe('migration 073: what no record owns', () => {
  it('removes the values of tickets, users and organisations that are gone, with their grams and ids, and keeps the others', async () => {
    const ticket = (await f.ticket()).id as number;
    const user = (await f.user()).id as number;
    const organisation = expectSuccess(await api.post('/api/user/organisation', { name: unique('Unowned org') }), 'Successfully created new organisation!').id as number;
    const [{ gone }] = await select<{ gone: number }>(
      'SELECT GREATEST((SELECT MAX(id) FROM tickets), (SELECT MAX(id) FROM users), (SELECT MAX(id) FROM organisations)) + 1000 AS gone', [],
    );
    const cases: Array<[string, number]> = [['ticket', ticket], ['user', user], ['organisation', organisation]];
    const fields: number[] = [];
    for (const [kind, owner] of cases) {
      const field = await CustomField.create({ kind: kind as 'ticket', name: unique(`Unowned ${kind}`), type: 8 });
      fields.push(field.id);
      // A value that is ids (071's rows) and text (070's grams) both: `12,34`, and one of text.
      for (const o of [owner, Number(gone)]) await execute('INSERT INTO custom_field_values (field_id, owner_id, value, created_at, updated_at) VALUES (?, ?, ?, 1, 1)', [field.id, o, '12,34'], undefined);
    }
    for (const [i, [kind, owner]] of cases.entries()) {
      expect({ kind, owned: await held(fields[i], owner), unowned: await held(fields[i], Number(gone)) })
        .toEqual({ kind, owned: { values: 1, grams: 3, ids: 2 }, unowned: { values: 1, grams: 3, ids: 2 } });
    }
    await m073.down(sequelize().getQueryInterface());
    await m073.up(sequelize().getQueryInterface());
    for (const [i, [kind, owner]] of cases.entries()) {
      expect({ kind, owned: await held(fields[i], owner), unowned: await held(fields[i], Number(gone)) })
        .toEqual({ kind, owned: { values: 1, grams: 3, ids: 2 }, unowned: { values: 0, grams: 0, ids: 0 } });
    }
    // The owned values are still listed by them.
    expect(expectList(await api.get('/api/ticket/ticket', { customfield: { [fields[0]]: '12,3' } })).map((t) => t.id)).toEqual([ticket]);
  });

  it("a ticket field's delete takes its option counters' rows; down leaves them (at 0), up removes them", async () => {
    const made = async () => {
      const field = expectSuccess(await api.post('/api/ticket/customfield', { name: unique('Counted'), type: 7, options: [{ value: 'A' }, { value: 'B' }] }), 'Successfully created new custom field!');
      const options = expectList(await api.get(`/api/ticket/customfield/${field.id}/option`)).map((o) => o.id as number);
      await f.ticket({ customfield: { [field.id]: options[0] } });
      await f.ticket({ status: ctx.otherStatus, customfield: { [field.id]: options[1] } });
      expect(await counterRows(field.id)).toBeGreaterThanOrEqual(2);
      return field.id as number;
    };
    const first = await made();
    expect(await trigger()).toBe(1);
    expect((await api.del(`/api/ticket/customfield/${first}`)).status).toBe(200);
    expect(await counterRows(first)).toBe(0);

    // Without the trigger a deleted field's rows stay, at 0; the migration removes them.
    await m073.down(sequelize().getQueryInterface());
    expect(await trigger()).toBe(0);
    const second = await made();
    await execute('DELETE FROM custom_fields WHERE id = ?', [second], undefined);
    expect(await counterRows(second)).toBeGreaterThanOrEqual(2);
    expect(await count('SELECT COALESCE(SUM(ABS(n)), 0) AS n FROM ticket_option_counts WHERE field_id = ?', [second])).toBe(0);
    await m073.up(sequelize().getQueryInterface());
    expect(await trigger()).toBe(1);
    expect(await counterRows(second)).toBe(0);
  });
});
