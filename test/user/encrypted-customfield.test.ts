/**
 * Custom fields marked `encrypted`: their values are stored encrypted at rest (bound to the
 * field), shown decrypted in responses, refused as list filters, re-encrypted or decrypted in place
 * when the flag changes, and kept by the ticket audit as a fingerprint only.
 */
import { CustomField, CustomFieldValue } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { SEALED } from '../../src/customfields/sealing';
import * as m024 from '../../migrations/024_sealed_custom_field_values';
import { newEmail, unique, useApi } from '../helpers/app';
import { expectError, expectList, expectSuccess } from '../helpers/envelope';
import { ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';

const api = useApi();
const stored = async (fieldId: number, ownerId: number) =>
  (await CustomFieldValue.findOne({ where: { field_id: fieldId, owner_id: ownerId } }))?.value ?? null;

async function field(form: Record<string, unknown>, path = '/api/user/customfield'): Promise<any> {
  return expectSuccess(await api.post(path, { type: 8, encrypted: 1, name: unique('Secret'), ...form }), 'Successfully created new custom field!');
}

async function user(customfield: Record<number, unknown>): Promise<any> {
  return expectSuccess(await api.post('/api/user/user', { firstname: 'Enc', lastname: 'Rypted', email: newEmail('enc'), customfield }), 'Successfully created new user!');
}

describe('a user field marked encrypted', () => {
  let f: any;
  beforeAll(async () => { f = await field({}); });

  it('stores the value encrypted and returns it decrypted in create, show and list', async () => {
    const u = await user({ [f.id]: 'passport 123456' });
    const value = (d: any) => d.customfields.find((v: any) => v.field_id === f.id)?.value;
    expect(value(u)).toBe('passport 123456');
    const raw = await stored(f.id, u.id);
    expect(raw).toMatch(SEALED);
    expect(raw).not.toContain('123456');
    expect(value(expectSuccess(await api.get(`/api/user/user/${u.id}`), null))).toBe('passport 123456');
    expect(expectList(await api.get('/api/user/user', { email: u.email })).map(value)).toEqual(['passport 123456']);
  });

  it('rewrites the stored value only when the value changes', async () => {
    const u = await user({ [f.id]: 'same' });
    const before = await stored(f.id, u.id);
    expectSuccess(await api.put(`/api/user/user/${u.id}`, { customfield: { [f.id]: 'same' } }), 'Successfully updated the user!');
    expect(await stored(f.id, u.id)).toBe(before);
    const updated = expectSuccess(await api.put(`/api/user/user/${u.id}`, { customfield: { [f.id]: 'other' } }), 'Successfully updated the user!');
    expect(updated.customfields.find((v: any) => v.field_id === f.id).value).toBe('other');
    expect(await stored(f.id, u.id)).not.toBe(before);
  });

  it('refuses to filter a list by it, with a 422 that names the field', async () => {
    expectError(await api.get('/api/user/user', { customfield: { [f.id]: 'passport' } }), 422, `The customfield.${f.id} is encrypted: its values cannot be searched.`);
  });

  it('does not decrypt a value copied from another field (each value is bound to its field)', async () => {
    const other = await field({});
    const u = await user({ [f.id]: 'mine', [other.id]: 'theirs' });
    await CustomFieldValue.update({ value: await stored(f.id, u.id) }, { where: { field_id: other.id, owner_id: u.id } });
    const shown = expectSuccess(await api.get(`/api/user/user/${u.id}`), null).customfields;
    expect(shown.find((v: any) => v.field_id === f.id).value).toBe('mine');
    expect(shown.find((v: any) => v.field_id === other.id).value).toBeNull();
  });

  it('decrypts its values in place when the flag is cleared, and encrypts them again when it is set', async () => {
    const g = await field({});
    const [a, b] = [await user({ [g.id]: 'alpha' }), await user({ [g.id]: 'beta' })];
    expectSuccess(await api.put(`/api/user/customfield/${g.id}`, { encrypted: 0 }), 'Successfully updated the custom field!');
    expect([await stored(g.id, a.id), await stored(g.id, b.id)]).toEqual(['alpha', 'beta']);
    expectSuccess(await api.put(`/api/user/customfield/${g.id}`, { encrypted: 1 }), 'Successfully updated the custom field!');
    for (const [u, plain] of [[a, 'alpha'], [b, 'beta']] as const) {
      expect(await stored(g.id, u.id)).toMatch(SEALED);
      expect(expectSuccess(await api.get(`/api/user/user/${u.id}`), null).customfields.find((v: any) => v.field_id === g.id).value).toBe(plain);
    }
  });

  it('of an option type: deleting an option removes it from the encrypted values', async () => {
    const g = await field({ type: 4, options: [{ value: 'A' }, { value: 'B' }, { value: 'C' }] });
    const [oa, ob, oc] = g.options.map((o: any) => o.id);
    const [both, onlyB] = [await user({ [g.id]: [oa, ob] }), await user({ [g.id]: [ob] })];
    expectSuccess(await api.put(`/api/user/customfield/${g.id}`, { options: [{ id: oa, value: 'A' }, { id: oc, value: 'C' }] }), 'Successfully updated the custom field!');
    const value = async (id: number) => expectSuccess(await api.get(`/api/user/user/${id}`), null).customfields.find((v: any) => v.field_id === g.id)?.value ?? null;
    expect(await value(both.id)).toBe(String(oa));
    expect(await stored(g.id, both.id)).toMatch(SEALED);
    expect(await value(onlyB.id)).toBeNull();
    expect(await stored(g.id, onlyB.id)).toBeNull();
  });

  it('migration 024 encrypts the values stored before it, and its down decrypts them', async () => {
    const g = await CustomField.create({ kind: 'user', name: unique('Legacy'), type: 8, encrypted: 1 });
    const u = await user({});
    await CustomFieldValue.create({ field_id: g.id, owner_id: u.id, value: 'written in the clear' });
    const other = await user({ [f.id]: 'x' });
    const sealedElsewhere = await stored(f.id, other.id);
    await m024.up(sequelize().getQueryInterface());
    expect(await stored(g.id, u.id)).toMatch(SEALED);
    // Values already encrypted are left alone (not encrypted twice).
    expect(await stored(f.id, other.id)).toBe(sealedElsewhere);
    expect(expectSuccess(await api.get(`/api/user/user/${u.id}`), null).customfields[0].value).toBe('written in the clear');
    await m024.down(sequelize().getQueryInterface());
    expect(await stored(g.id, u.id)).toBe('written in the clear');
    expect(await stored(f.id, other.id)).toBe('x');
    await m024.up(sequelize().getQueryInterface());
    expect(await stored(f.id, other.id)).toMatch(SEALED);
  });
});

describe('an encrypted ticket field in the audit', () => {
  let ctx: TicketContext;
  const t = ticketFactories(api, () => ctx);
  beforeAll(async () => { ctx = await ticketContext(); });

  it('shows that the value changed, never the value', async () => {
    const g = await field({}, '/api/ticket/customfield');
    const ticket = await t.ticket({ customfield: { [g.id]: 'card 4111' } });
    expect(ticket.customfields.find((v: any) => v.field_id === g.id).value).toBe('card 4111');
    expectSuccess(await api.put(`/api/ticket/ticket/${ticket.id}`, { customfield: { [g.id]: 'card 5500' } }), 'Successfully updated the ticket!');
    const audit = expectList(await api.get(`/api/ticket/ticket/${ticket.id}/audit`));
    const text = JSON.stringify(audit);
    expect(text).not.toMatch(/4111|5500|card/);
    const changed = audit.find((a: any) => a.action === 'updated').changes[`customfield.${g.id}`];
    expect(changed.before).toMatch(/^encrypted:[0-9a-f]{12}$/);
    expect(changed.after).toMatch(/^encrypted:[0-9a-f]{12}$/);
    expect(changed.after).not.toBe(changed.before);
  });
});
