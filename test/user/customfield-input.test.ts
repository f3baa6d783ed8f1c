/**
 * The `customfield` input of the writes that take it (tickets, users, organisations), one rule for
 * all: an object keyed by field id; `[]` is an empty one (JSON from PHP, whose `json_encode` of an
 * empty array is `[]`); null is none; a key that is not a field id, or anything else, is a 422 that
 * writes nothing.
 */
import { Brand, CustomField, CustomFieldValue, Organisation, Ticket, User } from '../../src/db/models';
import { newEmail, unique, useApi } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';
import { ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';

const api = useApi();
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);
beforeAll(async () => { ctx = await ticketContext(); });
/** A success envelope, whatever its message. */
const ok = (res: { status: number; body: any }) => {
  expect([res.status, res.body.status]).toEqual([200, 'success']);
  return res.body.data;
};

interface Writer {
  path: string;
  created: string;
  updated: string;
  kind: 'ticket' | 'user' | 'organisation';
  body: () => Record<string, unknown>;
  count: () => Promise<number>;
}

const writers: Writer[] = [
  {
    path: '/api/ticket/ticket', created: 'Successfully created new ticket!', updated: 'Successfully updated the ticket!', kind: 'ticket',
    body: () => f.body({ user_email: newEmail('cfin') }), count: () => Ticket.count(),
  },
  {
    path: '/api/user/user', created: 'Successfully created new user!', updated: 'Successfully updated the user!', kind: 'user',
    body: () => ({ firstname: 'Cf', lastname: 'Input', email: newEmail('cfin') }), count: () => User.count(),
  },
  {
    path: '/api/user/organisation', created: 'Successfully created new organisation!', updated: 'Successfully updated the organisation!', kind: 'organisation',
    body: () => ({ name: unique('Cf input') }), count: () => Organisation.count(),
  },
];

describe.each(writers.map((w) => [w.kind, w] as const))('customfield of a %s', (_kind, w) => {
  it('takes [] and null as no values, on create and on update', async () => {
    const field = await CustomField.create({ kind: w.kind, name: unique('Input field'), type: 8 });
    const created = expectSuccess(await api.postJson(w.path, { ...w.body(), customfield: [] }), w.created);
    expect(created.customfields).toEqual([]);
    expectSuccess(await api.postJson(w.path, { ...w.body(), customfield: null }), w.created);
    const withValue = expectSuccess(await api.putJson(`${w.path}/${created.id}`, { customfield: { [field.id]: 'kept' } }), w.updated);
    expect(withValue.customfields.map((v: any) => v.value)).toEqual(['kept']);
    // An empty map changes nothing (only a field named with an empty value is cleared).
    for (const none of [[], null, {}]) {
      const res = expectSuccess(await api.putJson(`${w.path}/${created.id}`, { customfield: none }), w.updated);
      expect(res.customfields.map((v: any) => v.value)).toEqual(['kept']);
    }
  });

  it('refuses keys that are no field id, and what is not a map, writing nothing', async () => {
    const before = await w.count();
    const values = await CustomFieldValue.count();
    expectError(await api.postJson(w.path, { ...w.body(), customfield: { colour: 'red' } }), 422, 'The selected customfield.colour is invalid.');
    for (const bad of [['red'], 'red', 7]) {
      expectError(await api.postJson(w.path, { ...w.body(), customfield: bad }), 422, 'The customfield must be an array keyed by custom field id.');
    }
    expect(await w.count()).toBe(before);
    expect(await CustomFieldValue.count()).toBe(values);
  });
});

describe.each([
  ['user', '/api/user/user', '/api/user/customfield', () => ({ firstname: 'Cf', lastname: 'Moved', email: newEmail('cfmv') })],
  ['organisation', '/api/user/organisation', '/api/user/organisationcustomfield', () => ({ name: unique('Cf moved') })],
] as const)('a %s\'s value of a field that no longer applies to its brand', (_kind, path, fieldPath, body) => {
  it('can be cleared (and only cleared) on an update', async () => {
    const brand = await Brand.create({ name: unique('Other brand') });
    const field = expectSuccess(await api.post(fieldPath, { name: unique('Brand field'), type: 8, brand: [1] }), 'Successfully created new custom field!');
    const owner = ok(await api.postJson(path, { ...body(), customfield: { [field.id]: 'kept' } }));
    // The field is now another brand's: the owner keeps the value it had.
    expectSuccess(await api.put(`${fieldPath}/${field.id}`, { brand: [brand.id] }), 'Successfully updated the custom field!');
    expect(ok(await api.get(`${path}/${owner.id}`)).customfields.map((v: any) => v.value)).toEqual(['kept']);
    expectError(await api.putJson(`${path}/${owner.id}`, { customfield: { [field.id]: 'changed' } }), 422, `The selected customfield.${field.id} is invalid.`);
    const cleared = ok(await api.putJson(`${path}/${owner.id}`, { customfield: { [field.id]: '' } }));
    expect(cleared.customfields).toEqual([]);
    // On a create it is no field of the brand at all.
    expectError(await api.postJson(path, { ...body(), customfield: { [field.id]: '' } }), 422, `The selected customfield.${field.id} is invalid.`);
  });
});

describe('locked organisation custom fields', () => {
  it('keep their value on update unless overwrite_customfield_values, as a user\'s do', async () => {
    const field = expectSuccess(await api.post('/api/user/organisationcustomfield', { name: unique('Locked'), type: 8, locked: 1 }), 'Successfully created new custom field!');
    const org = ok(await api.postJson('/api/user/organisation', { name: unique('Locked org'), customfield: { [field.id]: 'first' } }));
    const value = (o: any) => o.customfields.find((v: any) => v.field_id === field.id)?.value;
    expect(value(ok(await api.putJson(`/api/user/organisation/${org.id}`, { customfield: { [field.id]: 'second' } })))).toBe('first');
    expect(value(ok(await api.putJson(`/api/user/organisation/${org.id}`, { customfield: { [field.id]: 'second' }, overwrite_customfield_values: 1 })))).toBe('second');
  });
});

