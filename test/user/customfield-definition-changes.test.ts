/**
 * Changes of a custom field's definition (encrypted flag, options, type, deletion) and the stored
 * values: a change converts or deletes the values that no longer fit; a value written while the
 * change runs waits for it and is validated against the new definition.
 */
import type { Transaction } from 'sequelize';
import type { Response } from 'supertest';
import { CustomField, CustomFieldOption, CustomFieldValue, Organisation, User } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { SEALED } from '../../src/customfields/sealing';
import { organisationCustomFieldResource, userCustomFieldResource } from '../../src/customfields/fields';
import { newEmail, unique, useApi } from '../helpers/app';
import { expectDeleted, expectError, expectSuccess } from '../helpers/envelope';
import { raceAfterHeld } from '../helpers/races';
import { ticketCustomFieldResource } from '../../src/ticket/customfield';
import { ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const tickets = ticketFactories(api, () => ctx);
const USER_FIELDS = '/api/user/customfield';
const ORG_FIELDS = '/api/user/organisationcustomfield';

const stored = async (fieldId: number, ownerId: number) =>
  (await CustomFieldValue.findOne({ where: { field_id: fieldId, owner_id: ownerId } }))?.value ?? null;
const shown = (data: any, fieldId: number) => data.customfields.find((v: any) => v.field_id === fieldId)?.value ?? null;

async function makeField(form: Record<string, unknown>, path = USER_FIELDS): Promise<any> {
  return expectSuccess(await api.post(path, { type: 8, name: unique('field'), ...form }), 'Successfully created new custom field!');
}
const makeUser = () => User.create({ type: 'user', brand_id: 1, email: newEmail('cfd'), firstname: 'Ada', lastname: 'Byron' });
const setValue = (path: string, ownerId: number, fieldId: number, value: unknown) => api.put(`${path}/${ownerId}`, { customfield: { [fieldId]: value } });
const updated = (res: Response, path = '/api/user/user') => expectSuccess(res, `Successfully updated the ${path === '/api/user/user' ? 'user' : 'organisation'}!`);

/**
 * The change runs in a transaction held open (as the field's update does it: the field's row
 * locked first); the value write starts and is waited for until it waits for the field's
 * definition; then the change commits.
 */
function raceChange(resource: typeof userCustomFieldResource, fieldId: number, change: Record<string, unknown>, write: () => Promise<any>) {
  return raceAfterHeld(
    async (t: Transaction) => {
      const field = (await CustomField.findByPk(fieldId, { transaction: t, lock: t.LOCK.UPDATE }))!;
      await resource.update!(field, change, { transaction: t } as any);
    },
    () => write().then((res) => res),
    'AS option_ids', 'the value write to wait for the definition change',
  );
}

describe('a value written while the field changes', () => {
  it.each([
    ['user', USER_FIELDS, '/api/user/user', userCustomFieldResource],
    ['organisation', ORG_FIELDS, '/api/user/organisation', organisationCustomFieldResource],
  ] as const)('of a %s field whose encrypted flag flips is stored as the new flag says', async (_kind, fieldPath, ownerPath, resource) => {
    const field = await makeField({ encrypted: 0 }, fieldPath);
    const ownerId = ownerPath === '/api/user/user' ? (await makeUser()).id : (await Organisation.create({ brand_id: 1, name: unique('org') })).id;
    updated(await setValue(ownerPath, ownerId, field.id, 'before'), ownerPath);
    for (const [encrypted, value] of [[1, 'secret1'], [0, 'secret2']] as const) {
      const res = await raceChange(resource, field.id, { encrypted }, () => setValue(ownerPath, ownerId, field.id, value));
      expect(shown(updated(res, ownerPath), field.id)).toBe(value);
      const raw = await stored(field.id, ownerId);
      if (encrypted) expect(raw).toMatch(SEALED);
      else expect(raw).toBe(value);
      expect(shown(expectSuccess(await api.get(`${ownerPath}/${ownerId}`)), field.id)).toBe(value);
    }
  });

  it('of a ticket field whose encrypted flag flips is stored as the new flag says', async () => {
    const field = expectSuccess(await api.post('/api/ticket/customfield', { type: 8, name: unique('field'), encrypted: 0 }), 'Successfully created new custom field!');
    const ticket = await tickets.ticket();
    const write = (value: string) => api.put(`/api/ticket/ticket/${ticket.id}`, { customfield: { [field.id]: value } });
    const ticketUpdated = (res: Response) => expectSuccess(res, 'Successfully updated the ticket!');
    ticketUpdated(await write('before'));
    for (const [encrypted, value] of [[1, 'secret1'], [0, 'secret2']] as const) {
      const res = await raceChange(ticketCustomFieldResource, field.id, { encrypted }, () => write(value));
      expect(shown(ticketUpdated(res), field.id)).toBe(value);
      const raw = await stored(field.id, ticket.id);
      if (encrypted) expect(raw).toMatch(SEALED);
      else expect(raw).toBe(value);
      expect(shown(expectSuccess(await api.get(`/api/ticket/ticket/${ticket.id}`)), field.id)).toBe(value);
    }
  });

  it('naming an option removed meanwhile is refused as a later write is, and nothing points at the option', async () => {
    const field = await makeField({ type: 5, options: [{ value: 'a' }, { value: 'b' }] });
    const [a] = field.options.map((o: any) => o.id);
    const user = await makeUser();
    updated(await setValue('/api/user/user', user.id, field.id, a));
    const res = await raceChange(userCustomFieldResource, field.id, { options: [{ value: 'b' }] }, () => setValue('/api/user/user', user.id, field.id, a));
    expectError(res, 422, `The customfield.${field.id} must be the id of one of the field's options.`);
    expect(await stored(field.id, user.id)).toBeNull();
  });

  it('that does not fit the field\'s new type is refused as a later write is', async () => {
    const field = await makeField({ type: 8 });
    const user = await makeUser();
    updated(await setValue('/api/user/user', user.id, field.id, 'hello'));
    const res = await raceChange(userCustomFieldResource, field.id, { type: 3 }, () => setValue('/api/user/user', user.id, field.id, 'notadate'));
    expectError(res, 422, `The customfield.${field.id} must be a date as a UNIX timestamp (an integer).`);
    expect(await stored(field.id, user.id)).toBeNull();
  });

  it('of a field deleted meanwhile gets "The selected customfield.<id> is invalid."', async () => {
    const field = await makeField({ type: 8 });
    const user = await makeUser();
    // The definitions are kept by this process (a request reads them); another process's copy
    // would not know of the deletion either: it is made without the models, which bump the version.
    updated(await setValue('/api/user/user', user.id, field.id, 'x'));
    const res = await raceAfterHeld(
      async (t: Transaction) => {
        await sequelize().query('DELETE FROM custom_field_values WHERE field_id = ?', { replacements: [field.id], transaction: t });
        await sequelize().query('DELETE FROM custom_fields WHERE id = ?', { replacements: [field.id], transaction: t });
      },
      () => setValue('/api/user/user', user.id, field.id, 'y').then((res) => res),
      'AS option_ids', 'the value write to wait for the deletion',
    );
    expectError(res, 422, `The selected customfield.${field.id} is invalid.`);
    expect(await CustomFieldValue.count({ where: { field_id: field.id } })).toBe(0);
  });
});

describe('a type change', () => {
  it('keeps the values the new type takes (in its stored form) and deletes the others', async () => {
    const user = await makeUser();
    const other = await makeUser();
    const date = await makeField({ type: 8 });
    const text = await makeField({ type: 9 });
    const sealed = await makeField({ type: 9, encrypted: 1 });
    updated(await setValue('/api/user/user', user.id, date.id, '1700000000'));
    updated(await setValue('/api/user/user', other.id, date.id, 'hello'));
    updated(await setValue('/api/user/user', user.id, text.id, '  one line  '));
    updated(await setValue('/api/user/user', other.id, text.id, 'l1\nl2'));
    updated(await setValue('/api/user/user', user.id, sealed.id, 'x'.repeat(255)));
    updated(await setValue('/api/user/user', other.id, sealed.id, 'x'.repeat(256)));

    expectSuccess(await api.put(`${USER_FIELDS}/${date.id}`, { type: 3 }), 'Successfully updated the custom field!');
    expectSuccess(await api.put(`${USER_FIELDS}/${text.id}`, { type: 8 }), 'Successfully updated the custom field!');
    expectSuccess(await api.put(`${USER_FIELDS}/${sealed.id}`, { type: 8 }), 'Successfully updated the custom field!');

    expect(await stored(date.id, user.id)).toBe('1700000000');
    expect(await stored(date.id, other.id)).toBeNull();
    expect(await stored(text.id, user.id)).toBe('one line');
    expect(await stored(text.id, other.id)).toBeNull();
    expect(await stored(sealed.id, user.id)).toMatch(SEALED);
    expect(shown(expectSuccess(await api.get(`/api/user/user/${user.id}`)), sealed.id)).toBe('x'.repeat(255));
    expect(await stored(sealed.id, other.id)).toBeNull();
  });

  it('from one option to a list keeps the option; from a list to one option keeps single choices', async () => {
    const single = await makeField({ type: 5, options: [{ value: 'a' }, { value: 'b' }] });
    const multi = await makeField({ type: 4, options: [{ value: 'a' }, { value: 'b' }] });
    const [user, other] = [await makeUser(), await makeUser()];
    const [m1, m2] = multi.options.map((o: any) => o.id);
    updated(await setValue('/api/user/user', user.id, single.id, single.options[0].id));
    updated(await setValue('/api/user/user', user.id, multi.id, [m1]));
    updated(await setValue('/api/user/user', other.id, multi.id, [m1, m2]));
    expectSuccess(await api.put(`${USER_FIELDS}/${single.id}`, { type: 2 }), 'Successfully updated the custom field!');
    expectSuccess(await api.put(`${USER_FIELDS}/${multi.id}`, { type: 7 }), 'Successfully updated the custom field!');
    expect(await stored(single.id, user.id)).toBe(String(single.options[0].id));
    expect(await stored(multi.id, user.id)).toBe(String(m1));
    expect(await stored(multi.id, other.id)).toBeNull();
  });

  it.each([
    ['user', USER_FIELDS, async () => (await makeUser()).id],
    ['organisation', ORG_FIELDS, async () => (await Organisation.create({ brand_id: 1, name: unique('org') })).id],
    ['ticket', '/api/ticket/customfield', async () => (await tickets.ticket()).id],
  ] as const)('of a %s field with options to a type without is refused unless the request removes the options', async (_kind, path, owner) => {
    const field = await makeField({ type: 5, options: [{ value: 'a' }, { value: 'b' }] }, path);
    const options = await CustomFieldOption.findAll({ where: { field_id: field.id }, order: [['id', 'ASC']] });
    const ownerId = await owner();
    await CustomFieldValue.create({ field_id: field.id, owner_id: ownerId, value: String(options[0].id) });
    const message = 'The type of a custom field with options can only change to another type with options; remove its options first.';
    for (const change of [{ type: 9 }, { type: 1 }, { type: 8, options: [{ value: 'a' }] }]) {
      expectError(await api.put(`${path}/${field.id}`, change), 422, message);
    }
    expect(await CustomField.findByPk(field.id)).toMatchObject({ type: 5 });
    expect(await CustomFieldOption.count({ where: { field_id: field.id } })).toBe(2);
    expect(await stored(field.id, ownerId)).toBe(String(options[0].id));
    // Another option type keeps them; removing the options in the same request is a deliberate deletion.
    expectSuccess(await api.put(`${path}/${field.id}`, { type: 7 }), 'Successfully updated the custom field!');
    expect(await stored(field.id, ownerId)).toBe(String(options[0].id));
    expectSuccess(await api.put(`${path}/${field.id}`, { type: 9, options: null }), 'Successfully updated the custom field!');
    expect(await CustomFieldOption.count({ where: { field_id: field.id } })).toBe(0);
    expect(await stored(field.id, ownerId)).toBeNull();
    // An option type without options changes freely.
    const empty = await makeField({ type: 5 }, path);
    expectSuccess(await api.put(`${path}/${empty.id}`, { type: 8 }), 'Successfully updated the custom field!');
  });
});

describe('a dependency', () => {
  async function parentAndChild() {
    const parent = await makeField({ type: 5, options: [{ value: 'a' }, { value: 'b' }] });
    const child = await makeField({ type: 8, depends_on_field_id: parent.id, depends_on_option_id: parent.options[0].id });
    return { parent, child };
  }

  it('keeps the option it names from being removed, with a 422 naming the dependent field', async () => {
    const { parent, child } = await parentAndChild();
    expectError(await api.put(`${USER_FIELDS}/${parent.id}`, { options: [{ value: 'b' }] }), 422,
      `The option "a" cannot be deleted because the custom field "${child.name}" depends on it: change that field's dependency first.`);
    expectError(await api.put(`${USER_FIELDS}/${parent.id}`, { type: 8, options: null }), 422,
      `The option "a" cannot be deleted because the custom field "${child.name}" depends on it: change that field's dependency first.`);
    expect(expectSuccess(await api.get(`${USER_FIELDS}/${parent.id}`)).options.map((o: any) => o.value)).toEqual(['a', 'b']);
    expect(await CustomField.findByPk(child.id)).toMatchObject({ depends_on_field_id: parent.id, depends_on_option_id: parent.options[0].id });
    // The other option goes.
    expectSuccess(await api.put(`${USER_FIELDS}/${parent.id}`, { options: [{ value: 'a' }] }), 'Successfully updated the custom field!');
  });

  it('keeps the field it names from being deleted', async () => {
    const { parent, child } = await parentAndChild();
    expectError(await api.del(`${USER_FIELDS}/${parent.id}`), 422,
      `The custom field cannot be deleted because the custom field "${child.name}" depends on it: change that field's dependency first.`);
    expect(await CustomField.findByPk(parent.id)).not.toBeNull();
    expectSuccess(await api.put(`${USER_FIELDS}/${child.id}`, { depends_on_field_id: 0 }), 'Successfully updated the custom field!');
    expectDeleted(await api.del(`${USER_FIELDS}/${parent.id}`), 'custom field');
  });
});
