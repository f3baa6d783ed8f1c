/**
 * Required user and organisation custom fields: enforced on the API's forms (user and
 * organisation create; an update that sends one empty), never on a user the help desk creates
 * itself (a ticket's new `user_email`, with its `user_organisation`), which cannot know them.
 * Every field here belongs to a brand of this file's own, so its required fields never apply to
 * the users and organisations other test files create.
 */
import { CustomFieldValue, Organisation, User } from '../../src/db/models';
import { useApi, unique, newEmail } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';
import { ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';

const api = useApi();
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);

let brandId: number;
let departmentId: number;
let userField: number;
let orgField: number;

beforeAll(async () => {
  ctx = await ticketContext();
  brandId = expectSuccess(await api.post('/api/core/brand', { name: unique('Required brand') }), 'Successfully created new brand!').id;
  departmentId = (await f.department({}, brandId)).id;
  const field = async (path: string) => expectSuccess(await api.post(path, { name: unique('Required'), type: 8, required: 1, brand: [brandId] }), 'Successfully created new custom field!').id;
  userField = await field('/api/user/customfield');
  orgField = await field('/api/user/organisationcustomfield');
});

const USERS = '/api/user/user';
const ORGS = '/api/user/organisation';

describe('required custom fields and users the help desk creates itself', () => {
  it('opens a ticket for a new user_email (and user_organisation) despite required user and organisation fields', async () => {
    const email = newEmail('req');
    const orgName = unique('Req org');
    const res = await api.post('/api/ticket/ticket', f.body({ brand: brandId, department: departmentId, user_email: email, user_organisation: orgName }));
    const ticket = expectSuccess(res, 'Successfully created new ticket!');
    const user = (await User.findOne({ where: { email, brand_id: brandId } }))!;
    expect(ticket.user_id).toBe(user.id);
    const org = (await Organisation.findOne({ where: { name: orgName } }))!;
    expect(user.organisation_id).toBe(org.id);
    expect(await CustomFieldValue.count({ where: { owner_id: user.id, field_id: userField } })).toBe(0);
  });

  it('still enforces them on the user and organisation forms (create)', async () => {
    const email = newEmail('req');
    expectError(await api.post(USERS, { email, brand_id: brandId }), 422, `The customfield.${userField} field is required.`);
    expect(await User.count({ where: { email } })).toBe(0);
    expectSuccess(await api.post(USERS, { email, brand_id: brandId, customfield: { [userField]: 'given' } }), 'Successfully created new user!');
    expectError(await api.post(ORGS, { name: unique('Org'), brand_id: brandId }), 422, `The customfield.${orgField} field is required.`);
  });
});

describe('an update that sends a required field empty', () => {
  it('is refused for a user who has no value stored (the help desk created them), and changes nothing', async () => {
    const email = newEmail('req');
    expectSuccess(await api.post('/api/ticket/ticket', f.body({ brand: brandId, department: departmentId, user_email: email })), 'Successfully created new ticket!');
    const user = (await User.findOne({ where: { email, brand_id: brandId } }))!;
    expectError(await api.put(`${USERS}/${user.id}`, { firstname: 'Changed', customfield: { [userField]: '' } }), 422, `The customfield.${userField} field is required.`);
    expect((await User.findByPk(user.id))!.firstname).toBeNull();
    // Left out, it may stay missing; given, it is stored.
    expectSuccess(await api.put(`${USERS}/${user.id}`, { firstname: 'Changed' }), 'Successfully updated the user!');
    const updated = expectSuccess(await api.put(`${USERS}/${user.id}`, { customfield: { [userField]: 'now' } }), 'Successfully updated the user!');
    expect(updated.customfields.map((v: any) => [v.field_id, v.value])).toEqual([[userField, 'now']]);
  });

  it('is refused for a user who has a value stored, which stays', async () => {
    const user = expectSuccess(await api.post(USERS, { email: newEmail('req'), brand_id: brandId, customfield: { [userField]: 'kept' } }), 'Successfully created new user!');
    expectError(await api.put(`${USERS}/${user.id}`, { customfield: { [userField]: ' ' } }), 422, `The customfield.${userField} field is required.`);
    expect((await CustomFieldValue.findOne({ where: { owner_id: user.id, field_id: userField } }))!.value).toBe('kept');
  });

  it('is refused for an organisation, with or without a stored value', async () => {
    const email = newEmail('req');
    const orgName = unique('Req org');
    expectSuccess(await api.post('/api/ticket/ticket', f.body({ brand: brandId, department: departmentId, user_email: email, user_organisation: orgName })), 'Successfully created new ticket!');
    const org = (await Organisation.findOne({ where: { name: orgName } }))!;
    expectError(await api.put(`${ORGS}/${org.id}`, { customfield: { [orgField]: '' } }), 422, `The customfield.${orgField} field is required.`);
    expectSuccess(await api.put(`${ORGS}/${org.id}`, { customfield: { [orgField]: 'set' } }), 'Successfully updated the organisation!');
    expectError(await api.put(`${ORGS}/${org.id}`, { notes: 'x', customfield: { [orgField]: '' } }), 422, `The customfield.${orgField} field is required.`);
    expect((await CustomFieldValue.findOne({ where: { owner_id: org.id, field_id: orgField } }))!.value).toBe('set');
  });
});
