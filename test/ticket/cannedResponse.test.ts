import {
  CannedResponse, CannedResponseGroup, CannedResponseTag, Department, Group, TicketPriority, TicketStatus, TicketTag, Translation, User,
} from '../../src/db/models';
import { useApi, unique, newEmail } from '../helpers/app';
import { countWarm } from '../helpers/queries';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/ticket/cannedresponse';
const DETAIL_KEYS = ['id', 'name', 'text', 'user_id', 'public', 'all_groups', 'created_at', 'updated_at', 'tags', 'groups', 'translations'];
const LIST_KEYS = [
  'id', 'name', 'text', 'category_id', 'user_id', 'all_groups', 'department_id', 'priority_id', 'status_id', 'tags', 'created_at',
  'updated_at', 'translations',
];
const TAG_KEYS = ['id', 'name', 'colour', 'created_at', 'updated_at'];
const GROUP_KEYS = ['id', 'name', 'description', 'colour', 'administrator', 'created_at', 'updated_at', 'pivot'];

const keysOf = (o: object) => Object.keys(o).sort();
const TEXT = 'Hi {{ user.firstname }},\n\nThanks for contacting {{ brand.name }} about #{{ ticket.number }}.\n{% if user.organisation %}{{ user.organisation.name }}{% endif %}\n';

async function createResponse(body: Record<string, unknown> = {}): Promise<any> {
  return expectSuccess(await api.post(BASE, { name: unique('Canned'), text: 'Hello there', ...body }), 'Successfully created new canned response!');
}

let operator: User;
let customer: User;
let operatorGroup: Group;
let otherOperatorGroup: Group;
let userGroup: Group;
beforeAll(async () => {
  operator = await User.create({ type: 'operator', email: newEmail('op'), firstname: 'Ada', lastname: 'Lovelace' });
  customer = await User.create({ type: 'user', brand_id: 1, email: newEmail('cu') });
  operatorGroup = (await Group.findOne({ where: { type: 'operator' }, order: [['id', 'ASC']] }))!;
  otherOperatorGroup = await Group.create({ type: 'operator', name: unique('Tier 2') });
  userGroup = (await Group.findOne({ where: { type: 'user' }, order: [['id', 'ASC']] }))!;
});

describe('POST /api/ticket/cannedresponse', () => {
  it('creates a response: the detail shape, public and for every group by default', async () => {
    const name = unique('Greeting');
    const data = expectSuccess(await api.post(BASE, { name, text: TEXT }), 'Successfully created new canned response!');
    expect(keysOf(data)).toEqual([...DETAIL_KEYS].sort());
    expect(data).toMatchObject({ name, text: TEXT, user_id: null, public: 1, all_groups: 1, tags: [], groups: [], translations: [] });
    expect((await CannedResponse.findByPk(data.id))!.text).toBe(TEXT);
  });

  it('keeps the text exactly as written, merge fields included (JSON too)', async () => {
    const text = '  {{ user.firstname }}\t{{ ticket.frontend_url }}  ';
    const data = expectSuccess(await api.postJson(BASE, { name: unique('Raw'), text }), 'Successfully created new canned response!');
    expect(data.text).toBe(text);
  });

  it('takes tag names: finds existing tags (any case), creates the missing ones', async () => {
    const existing = await TicketTag.create({ name: unique('Billing'), colour: '#123456' });
    const fresh = unique('Refund');
    const data = await createResponse({ tag: [existing.name.toLowerCase(), fresh, fresh] });
    expect(data.tags.map((t: any) => t.name).sort()).toEqual([existing.name, fresh].sort());
    for (const t of data.tags) expect(keysOf(t)).toEqual([...TAG_KEYS].sort());
    expect(data.tags.find((t: any) => t.id === existing.id)).toEqual({
      id: existing.id, name: existing.name, colour: '#123456', created_at: existing.created_at, updated_at: existing.updated_at,
    });
    const created = (await TicketTag.findOne({ where: { name: fresh } }))!;
    expect(created.colour).toBe('#dddddd');
    expect(await CannedResponseTag.count({ where: { response_id: data.id } })).toBe(2);
  });

  it('limits the response to operator groups: all_groups 0, groups with their pivot', async () => {
    const data = await createResponse({ groups: [otherOperatorGroup.id, operatorGroup.id] });
    expect(data.all_groups).toBe(0);
    expect(data.groups.map((g: any) => g.id)).toEqual([operatorGroup.id, otherOperatorGroup.id].sort((a, b) => a - b));
    for (const g of data.groups) expect(keysOf(g)).toEqual([...GROUP_KEYS].sort());
    expect(data.groups.find((g: any) => g.id === operatorGroup.id)).toMatchObject({
      name: operatorGroup.name, administrator: operatorGroup.administrator, pivot: { response_id: data.id, group_id: operatorGroup.id },
    });
    const empty = await createResponse({ groups: '' });
    expect(empty).toMatchObject({ all_groups: 1, groups: [] });
  });

  it('a private response belongs to an operator', async () => {
    const data = await createResponse({ public: 0, user_id: operator.id });
    expect(data).toMatchObject({ public: 0, user_id: operator.id });
    expectError(await api.post(BASE, { name: 'x', text: 'y', public: 0 }), 422, 'The user id field is required when public is 0.');
    expectError(await api.post(BASE, { name: 'x', text: 'y', user_id: customer.id }), 422, 'The selected user id is invalid.');
  });

  it('a public response has no owner: making one public clears it, naming one with it is refused', async () => {
    const count = await CannedResponse.count();
    expectError(await api.post(BASE, { name: 'x', text: 'y', user_id: operator.id }), 422, 'The user id field is prohibited when public is 1.');
    expect(await CannedResponse.count()).toBe(count);
    const mine = await createResponse({ public: 0, user_id: operator.id });
    expectError(await api.put(`${BASE}/${mine.id}`, { public: 1, user_id: operator.id }), 422, 'The user id field is prohibited when public is 1.');
    expect(expectSuccess(await api.put(`${BASE}/${mine.id}`, { public: 1 }), 'Successfully updated the canned response!')).toMatchObject({ public: 1, user_id: null });
    expectError(await api.put(`${BASE}/${mine.id}`, { user_id: operator.id }), 422, 'The user id field is prohibited when public is 1.');
    expect(expectSuccess(await api.put(`${BASE}/${mine.id}`, { public: 0, user_id: operator.id }), 'Successfully updated the canned response!')).toMatchObject({ public: 0, user_id: operator.id });
  });

  it('an operator\'s private responses go with the operator; the public ones they wrote stay', async () => {
    const leaving = await User.create({ type: 'operator', email: newEmail('leave'), firstname: 'Leo', lastname: 'Leaving' });
    const own = await createResponse({ public: 0, user_id: leaving.id, 'name:fr': 'Privé' });
    const shared = await createResponse();
    expectDeleted(await api.del(`/api/user/operator/${leaving.id}`), 'operator');
    expectNotFound(await api.get(`${BASE}/${own.id}`), 'canned response');
    expect(await Translation.count({ where: { record_type: 'canned_response', record_id: own.id } })).toBe(0);
    expectSuccess(await api.get(`${BASE}/${shared.id}`));
  });

  it.each([
    [{ text: 'y' }, 'The name field is required.'],
    [{ name: 'x' }, 'The text field is required.'],
    [{ name: 'x', text: '   ' }, 'The text field is required.'],
    [{ name: 'x', text: 'y', groups: [999999] }, 'The selected groups.0 is invalid.'],
    [{ name: 'x', text: 'y', tag: [''] }, 'The tag.0 field is required.'],
    [{ name: 'x', text: 'y', public: 'sometimes' }, 'The public field must be true or false.'],
    [{ name: 'x', text: 'y', status_id: 999999 }, 'The selected status id is invalid.'],
    [{ name: 'x', text: 'y', 'tag:fr': 'x' }, 'The tag:fr field is not translatable.'],
  ] as Array<[Record<string, unknown>, string]>)('422 %j', async (body, message) => {
    const count = await CannedResponse.count();
    expectError(await api.post(BASE, body), 422, message);
    expect(await CannedResponse.count()).toBe(count);
  });

  it('422 for a user group, and no tag is left behind', async () => {
    const fresh = unique('orphan');
    expectError(await api.post(BASE, { name: 'x', text: 'y', tag: [fresh], groups: [operatorGroup.id, userGroup.id] }), 422, 'The selected groups.1 is invalid.');
    expect(await TicketTag.count({ where: { name: fresh } })).toBe(0);
  });
});

describe('GET /api/ticket/cannedresponse', () => {
  it('lists items in the list shape: tags as a comma-separated string of names', async () => {
    const [t1, t2] = [unique('alpha'), unique('beta')];
    const dept = await Department.create({ name: unique('D') });
    const priority = (await TicketPriority.findOne())!;
    const status = (await TicketStatus.findOne())!;
    const created = await createResponse({
      tag: [t1, t2], groups: [operatorGroup.id], department_id: dept.id, priority_id: priority.id, status_id: status.id,
    });
    const res = await api.get(BASE, { limit: 1000 });
    const item = expectList(res).find((r) => r.id === created.id);
    expect(keysOf(item)).toEqual([...LIST_KEYS].sort());
    expect(item).toEqual({
      id: created.id, name: created.name, text: 'Hello there', category_id: null, user_id: null, all_groups: 0,
      department_id: dept.id, priority_id: priority.id, status_id: status.id, tags: `${t1},${t2}`,
      created_at: created.created_at, updated_at: created.updated_at, translations: [],
    });
    expect(res.body.count).toBe(await CannedResponse.count());
    const bare = await createResponse();
    expect(expectList(await api.get(BASE, { limit: 1000 })).find((r) => r.id === bare.id).tags).toBe('');
  });

  it('a page costs the same number of queries whatever its size', async () => {
    for (let i = 0; i < 3; i++) await createResponse({ tag: [unique('q')] });
    // Newest first: every page starts with a response that has a tag.
    const one = await countWarm(() => api.get(BASE, { limit: 1, order_direction: 'desc' }));
    const many = await countWarm(() => api.get(BASE, { limit: 50, order_direction: 'desc' }));
    expect(many.queries.length).toBe(one.queries.length);
  });

  it('shows one response in the detail shape', async () => {
    const created = await createResponse({ tag: [unique('shown')], groups: [operatorGroup.id], public: 0, user_id: operator.id });
    const data = expectSuccess(await api.get(`${BASE}/${created.id}`));
    expect(data).toEqual(created);
    expectNotFound(await api.get(`${BASE}/999999`), 'canned response');
  });
});

describe('PUT /api/ticket/cannedresponse/{id}', () => {
  it('changes only what is sent', async () => {
    const created = await createResponse({ tag: [unique('keep')] });
    const data = expectSuccess(await api.put(`${BASE}/${created.id}`, { text: TEXT }), 'Successfully updated the canned response!');
    expect(data).toMatchObject({ name: created.name, text: TEXT, tags: created.tags, public: 1, all_groups: 1 });
  });

  it('tag replaces the tags; an empty tag removes them', async () => {
    const created = await createResponse({ tag: [unique('old')] });
    const fresh = unique('new');
    const data = expectSuccess(await api.put(`${BASE}/${created.id}`, { tag: [fresh] }), 'Successfully updated the canned response!');
    expect(data.tags.map((t: any) => t.name)).toEqual([fresh]);
    expect(expectSuccess(await api.put(`${BASE}/${created.id}`, { tag: '' }), 'Successfully updated the canned response!').tags).toEqual([]);
    // The tag itself stays.
    expect(await TicketTag.count({ where: { name: created.tags[0].name } })).toBe(1);
  });

  it('groups replaces the groups; an empty groups makes it visible to every group', async () => {
    const created = await createResponse({ groups: [operatorGroup.id] });
    const moved = expectSuccess(await api.putJson(`${BASE}/${created.id}`, { groups: [otherOperatorGroup.id] }), 'Successfully updated the canned response!');
    expect(moved.groups.map((g: any) => g.id)).toEqual([otherOperatorGroup.id]);
    const all = expectSuccess(await api.putJson(`${BASE}/${created.id}`, { groups: [] }), 'Successfully updated the canned response!');
    expect(all).toMatchObject({ all_groups: 1, groups: [] });
    expect(await CannedResponseGroup.count({ where: { response_id: created.id } })).toBe(0);
  });

  it('public 0 needs an owner, given or already there', async () => {
    const created = await createResponse();
    expectError(await api.put(`${BASE}/${created.id}`, { public: 0 }), 422, 'The user id field is required when public is 0.');
    expect(expectSuccess(await api.put(`${BASE}/${created.id}`, { public: 0, user_id: operator.id }), 'Successfully updated the canned response!'))
      .toMatchObject({ public: 0, user_id: operator.id });
    expectError(await api.put(`${BASE}/${created.id}`, { user_id: '' }), 422, 'The user id field is required when public is 0.');
    expect(expectSuccess(await api.put(`${BASE}/${created.id}`, { public: 1, user_id: '' }), 'Successfully updated the canned response!'))
      .toMatchObject({ public: 1, user_id: null });
  });

  it('404 and 422', async () => {
    expectNotFound(await api.put(`${BASE}/999999`, { name: 'x' }), 'canned response');
    const created = await createResponse();
    expectError(await api.put(`${BASE}/${created.id}`, { text: ' ' }), 422, 'The text field is required.');
    expectError(await api.put(`${BASE}/${created.id}`, { groups: [userGroup.id] }), 422, 'The selected groups.0 is invalid.');
  });
});

describe('translations', () => {
  it('of name and text: lang replaces both; the translations array lists every locale', async () => {
    const data = await createResponse({ name: 'Thanks', text: TEXT, 'name:fr': 'Merci', 'text:fr': 'Bonjour {{ user.firstname }}', 'text:de': 'Hallo' });
    expect(data.translations).toEqual([
      { response_id: data.id, name: null, text: 'Hallo', locale: 'de' },
      { response_id: data.id, name: 'Merci', text: 'Bonjour {{ user.firstname }}', locale: 'fr' },
    ]);
    const fr = expectSuccess(await api.get(`${BASE}/${data.id}`, { lang: 'fr' }));
    expect(fr).toMatchObject({ name: 'Merci', text: 'Bonjour {{ user.firstname }}' });
    expect(fr.translations).toBeUndefined();
    const listed = expectList(await api.get(BASE, { lang: 'de', limit: 1000 })).find((r) => r.id === data.id);
    expect(listed).toMatchObject({ name: 'Thanks', text: 'Hallo' });
  });

  it('an update with one translation deletes the others', async () => {
    const data = await createResponse({ 'name:fr': 'Merci', 'text:de': 'Hallo' });
    const updated = expectSuccess(await api.put(`${BASE}/${data.id}`, { 'text:es': 'Hola' }), 'Successfully updated the canned response!');
    expect(updated.translations).toEqual([{ response_id: data.id, name: null, text: 'Hola', locale: 'es' }]);
    expect(await Translation.count({ where: { record_type: 'canned_response', record_id: data.id } })).toBe(1);
  });
});

describe('DELETE /api/ticket/cannedresponse/{id}', () => {
  it('deletes the response, its links and translations; its tags stay', async () => {
    const tag = unique('stays');
    const created = await createResponse({ tag: [tag], groups: [operatorGroup.id], 'name:fr': 'x' });
    expectDeleted(await api.del(`${BASE}/${created.id}`), 'canned response');
    expectNotFound(await api.get(`${BASE}/${created.id}`), 'canned response');
    expect(await CannedResponseTag.count({ where: { response_id: created.id } })).toBe(0);
    expect(await CannedResponseGroup.count({ where: { response_id: created.id } })).toBe(0);
    expect(await Translation.count({ where: { record_type: 'canned_response', record_id: created.id } })).toBe(0);
    expect(await TicketTag.count({ where: { name: tag } })).toBe(1);
  });
});
