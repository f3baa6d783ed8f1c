import request from 'supertest';
import {
  Department,
  EmailTemplate, FeedbackField, FeedbackForm, TicketFeedback, TicketFeedbackValue, Translation, User,
} from '../../src/db/models';
import { transaction } from '../../src/db/transaction';
import { createTicket } from '../../src/ticket/tickets/service';
import { createFeedbackRequest, feedbackToken } from '../../src/ticket/feedbackRequest';
import { useApi, newEmail, nowSec } from '../helpers/app';
import { countWarm } from '../helpers/queries';
import { expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/ticket/feedback';
const FEEDBACK_KEYS = ['id', 'ticket_id', 'form_id', 'rating', 'token', 'fields_answered', 'expiry_time', 'created_at', 'updated_at', 'form', 'values'];
const FORM_KEYS = [
  'condition_group_type', 'created_at', 'description', 'email_template_id', 'expiry_time', 'fields', 'id', 'name', 'order',
  'time_after_resolved', 'translations', 'updated_at',
];
const FIELD_KEYS = ['created_at', 'form_id', 'id', 'name', 'translations', 'type', 'updated_at'];
const VALUE_KEYS = ['created_at', 'feedback_id', 'field_id', 'id', 'updated_at', 'value'];

const keysOf = (o: object) => Object.keys(o).sort();
const ids = (data: any[]) => data.map((d) => d.id);

let form: FeedbackForm;
let fields: FeedbackField[];
let otherForm: FeedbackForm;
let otherField: FeedbackField;
let user: User;
let department: Department;

/** A real ticket of the test's user (feedback rows reference tickets). */
const newTicket = () => transaction(async (t) => (await createTicket({ departmentId: department.id, subject: 'Feedback wanted', text: 'Hello', userId: user.id }, t)).ticket);

const newFeedback = async (values: Partial<TicketFeedback> = {}) => {
  const ticket = await newTicket();
  const f = await createFeedbackRequest({ ticketId: ticket.id, userId: user.id, form });
  return Object.keys(values).length ? f.update(values) : f;
};

beforeAll(async () => {
  form = (await FeedbackForm.findOne({ order: [['id', 'ASC']] }))!;
  fields = await FeedbackField.findAll({ where: { form_id: form.id }, order: [['order', 'ASC']] });
  otherForm = await FeedbackForm.create({ name: 'Other form', expiry_time: 0, time_after_resolved: 3600, order: 1000 }); // never the first form (the scheduler asks with the first)
  otherField = await FeedbackField.create({ form_id: otherForm.id, name: 'Other question', type: 8, order: 1 });
  user = await User.create({ type: 'user', brand_id: 1, email: newEmail('fb') });
  department = (await Department.findOne({ order: [['id', 'ASC']] }))!;
});

describe('the seeded feedback form', () => {
  it('has a few fields and sends the feedback request template', async () => {
    const template = (await EmailTemplate.findOne({ where: { name: 'user_feedback_request', brand_id: null } }))!;
    expect(form).toMatchObject({ email_template_id: template.id, expiry_time: 604800, time_after_resolved: 86400, condition_group_type: 0 });
    expect(fields.length).toBeGreaterThanOrEqual(2);
  });
});

describe('createFeedbackRequest', () => {
  it('makes a 32-character random token and the expiry of the form', async () => {
    const before = nowSec();
    const f = await newFeedback();
    expect(f.token).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(f.token).not.toBe((await newFeedback()).token);
    expect(f.expiry_time).toBeGreaterThanOrEqual(before + 604800);
    expect(f.expiry_time).toBeLessThanOrEqual(nowSec() + 604800);
    expect(f).toMatchObject({ rating: null, fields_answered: 0, user_id: user.id, form_id: form.id });
    const never = await createFeedbackRequest({ ticketId: (await newTicket()).id, userId: null, form: otherForm });
    expect(never.expiry_time).toBeNull();
    expect(new Set(Array.from({ length: 50 }, feedbackToken)).size).toBe(50);
  });
});

describe('GET /api/ticket/feedback', () => {
  it('lists feedback records with their form and values, and count', async () => {
    const f = await newFeedback({ rating: 1 });
    await TicketFeedbackValue.create({ feedback_id: f.id, field_id: fields[0].id, value: 'Quick and kind.' });
    const res = await api.get(BASE, { ticket_id: f.ticket_id });
    const [item] = expectList(res);
    expect(res.body.count).toBe(1);
    expect(keysOf(item)).toEqual([...FEEDBACK_KEYS].sort());
    expect(item).toMatchObject({
      id: f.id, ticket_id: f.ticket_id, form_id: form.id, rating: 1, token: f.token, fields_answered: 0, expiry_time: f.expiry_time,
    });
    expect(keysOf(item.form)).toEqual([...FORM_KEYS].sort());
    expect(item.form).toMatchObject({ id: form.id, name: form.name, description: form.description, order: form.order, translations: [] });
    expect(item.form.fields.map((x: any) => x.id)).toEqual(fields.map((x) => x.id));
    for (const field of item.form.fields) expect(keysOf(field)).toEqual([...FIELD_KEYS].sort());
    expect(item.values).toHaveLength(1);
    expect(keysOf(item.values[0])).toEqual([...VALUE_KEYS].sort());
    expect(item.values[0]).toMatchObject({ feedback_id: f.id, field_id: fields[0].id, value: 'Quick and kind.' });
  });

  it('filters by ticket_id, user_id and rating', async () => {
    const other = await User.create({ type: 'user', brand_id: 1, email: newEmail('fb2') });
    const good = await newFeedback({ rating: 1 });
    const bad = await newFeedback({ rating: 0, user_id: other.id });
    const neutral = await newFeedback({ rating: 2, user_id: other.id });
    const unrated = await newFeedback({ user_id: other.id });
    expect(ids(expectList(await api.get(BASE, { user_id: other.id })))).toEqual([bad.id, neutral.id, unrated.id]);
    expect(ids(expectList(await api.get(BASE, { user_id: other.id, rating: 0 })))).toEqual([bad.id]);
    expect(ids(expectList(await api.get(BASE, { user_id: other.id, rating: 2 })))).toEqual([neutral.id]);
    expect(ids(expectList(await api.get(BASE, { ticket_id: good.ticket_id })))).toEqual([good.id]);
    const goodOnes = expectList(await api.get(BASE, { rating: 1, limit: 1000 }));
    expect(ids(goodOnes)).toContain(good.id);
    expect(goodOnes.every((f) => f.rating === 1)).toBe(true);
    expect(expectList(await api.get(BASE, { ticket_id: 4_000_000_000 }))).toEqual([]);
  });

  it.each([
    [{ rating: 3 }, 'The selected rating is invalid.'],
    [{ rating: 'good' }, 'The selected rating is invalid.'],
    [{ ticket_id: 'x' }, 'The ticket id must be an integer.'],
    [{ user_id: 0 }, 'The user id must be at least 1.'],
  ] as Array<[Record<string, unknown>, string]>)('422 %j', async (query, message) => {
    expectError(await api.get(BASE, query), 422, message);
  });

  it('a page costs the same number of queries whatever its size', async () => {
    for (let i = 0; i < 3; i++) {
      const f = await newFeedback();
      await TicketFeedbackValue.create({ feedback_id: f.id, field_id: fields[1].id, value: `answer ${i}` });
    }
    const one = await countWarm(() => api.get(BASE, { limit: 1, order_direction: 'desc' }));
    const many = await countWarm(() => api.get(BASE, { limit: 50, order_direction: 'desc' }));
    expect(many.queries.length).toBe(one.queries.length);
  });
});

describe('GET /api/ticket/feedback/{id}', () => {
  it('returns data as an array of one record (the spec sample)', async () => {
    const f = await newFeedback({ rating: 2 });
    const data = expectSuccess(await api.get(`${BASE}/${f.id}`));
    expect(Array.isArray(data)).toBe(true);
    expect(data).toHaveLength(1);
    expect(keysOf(data[0])).toEqual([...FEEDBACK_KEYS].sort());
    expect(data[0]).toMatchObject({ id: f.id, rating: 2, values: [] });
    expect(data[0]).toEqual(expectList(await api.get(BASE, { ticket_id: f.ticket_id }))[0]);
  });

  it('translates the form and its fields with lang, else lists their translations', async () => {
    const f = await createFeedbackRequest({ ticketId: (await newTicket()).id, userId: user.id, form: otherForm });
    await Translation.bulkCreate([
      { record_type: 'feedback_form', record_id: otherForm.id, locale: 'fr', field: 'name', value: 'Autre formulaire' },
      { record_type: 'feedback_field', record_id: otherField.id, locale: 'fr', field: 'name', value: 'Autre question' },
    ]);
    const [plain] = expectSuccess(await api.get(`${BASE}/${f.id}`));
    expect(plain.form.translations).toEqual([{ form_id: otherForm.id, name: 'Autre formulaire', description: null, locale: 'fr' }]);
    expect(plain.form.fields).toEqual([{
      id: otherField.id, form_id: otherForm.id, name: 'Other question', type: 8, created_at: otherField.created_at, updated_at: otherField.updated_at,
      translations: [{ field_id: otherField.id, name: 'Autre question', locale: 'fr' }],
    }]);
    expect(plain.form).toMatchObject({ expiry_time: 0, time_after_resolved: 3600, email_template_id: null });
    const [fr] = expectSuccess(await api.get(`${BASE}/${f.id}`, { lang: 'fr' }));
    expect(fr.form.name).toBe('Autre formulaire');
    expect(fr.form.translations).toBeUndefined();
    expect(fr.form.fields[0]).toMatchObject({ name: 'Autre question' });
    expect(fr.form.fields[0].translations).toBeUndefined();
  });

  it.each(['999999', 'x'])('404 for %s', async (id) => {
    expectNotFound(await api.get(`${BASE}/${id}`), 'ticket feedback');
  });
});

describe('PUT /api/ticket/feedback/{id}', () => {
  it('sets the rating and returns a single object', async () => {
    const f = await newFeedback();
    const data = expectSuccess(await api.put(`${BASE}/${f.id}`, { rating: 0 }), 'Successfully updated the ticket feedback!');
    expect(Array.isArray(data)).toBe(false);
    expect(keysOf(data)).toEqual([...FEEDBACK_KEYS].sort());
    expect(data).toMatchObject({ id: f.id, rating: 0, token: f.token });
    expect((await TicketFeedback.findByPk(f.id))!.rating).toBe(0);
    expect(expectSuccess(await api.putJson(`${BASE}/${f.id}`, { rating: '2' }), 'Successfully updated the ticket feedback!').rating).toBe(2);
  });

  it('answers fields by id, counts them, and an empty answer removes one', async () => {
    const f = await newFeedback();
    const [a, b] = fields;
    const data = expectSuccess(await api.put(`${BASE}/${f.id}`, { values: { [a.id]: 'Fast reply', [b.id]: 'Nothing' } }), 'Successfully updated the ticket feedback!');
    expect(data.fields_answered).toBe(2);
    expect(data.values.map((v: any) => [v.field_id, v.value])).toEqual([[a.id, 'Fast reply'], [b.id, 'Nothing']]);
    const changed = expectSuccess(await api.putJson(`${BASE}/${f.id}`, { rating: 1, values: { [a.id]: 'Very fast', [b.id]: '' } }), 'Successfully updated the ticket feedback!');
    expect(changed).toMatchObject({ rating: 1, fields_answered: 1 });
    expect(changed.values.map((v: any) => [v.field_id, v.value])).toEqual([[a.id, 'Very fast']]);
    expect(changed.values[0].id).toBe(data.values[0].id);
  });

  it('leaves the record as it was when nothing is sent', async () => {
    const f = await newFeedback({ rating: 1 });
    expect(expectSuccess(await api.put(`${BASE}/${f.id}`, {}), 'Successfully updated the ticket feedback!')).toMatchObject({ rating: 1, fields_answered: 0 });
  });

  it('takes answers as their field\'s type: a Boolean 1/0, a Date a timestamp', async () => {
    const typedForm = await FeedbackForm.create({ name: 'Typed form', expiry_time: 0, time_after_resolved: 3600, order: 1001 });
    const yes = await FeedbackField.create({ form_id: typedForm.id, name: 'Solved?', type: 0, order: 1 });
    const when = await FeedbackField.create({ form_id: typedForm.id, name: 'Since when?', type: 3, order: 2 });
    const f = await createFeedbackRequest({ ticketId: (await newTicket()).id, userId: user.id, form: typedForm });
    expectError(await api.put(`${BASE}/${f.id}`, { values: { [yes.id]: 'maybe' } }), 422, `The values.${yes.id} field must be true or false.`);
    expectError(await api.put(`${BASE}/${f.id}`, { values: { [when.id]: 'yesterday' } }), 422, `The values.${when.id} must be a date as a UNIX timestamp (an integer).`);
    expect(await TicketFeedbackValue.count({ where: { feedback_id: f.id } })).toBe(0);
    const data = expectSuccess(await api.put(`${BASE}/${f.id}`, { values: { [yes.id]: 'true', [when.id]: '1700000000' } }), 'Successfully updated the ticket feedback!');
    expect(data.values.map((v: any) => [v.field_id, v.value]).sort()).toEqual([[yes.id, '1'], [when.id, '1700000000']].sort());
  });

  it('422 for an unknown field id or a field of another form, and nothing changes', async () => {
    const f = await newFeedback();
    expectError(await api.put(`${BASE}/${f.id}`, { values: { 999999: 'x' } }), 422, 'The selected values.999999 is invalid.');
    expectError(await api.put(`${BASE}/${f.id}`, { rating: 1, values: { [fields[0].id]: 'ok', [otherField.id]: 'x' } }), 422, `The selected values.${otherField.id} is invalid.`);
    expectError(await api.put(`${BASE}/${f.id}`, { values: { abc: 'x' } }), 422, 'The selected values.abc is invalid.');
    expectError(await api.putJson(`${BASE}/${f.id}`, { values: { [fields[0].id]: { nested: 1 } } }), 422, `The values.${fields[0].id} must be a string.`);
    expectError(await api.putJson(`${BASE}/${f.id}`, { values: 'text' }), 422, 'The values must be an array keyed by feedback field id (values[<id>]=answer).');
    expectError(await api.put(`${BASE}/${f.id}`, { rating: 5 }), 422, 'The selected rating is invalid.');
    const after = (await TicketFeedback.findByPk(f.id))!;
    expect(after).toMatchObject({ rating: null, fields_answered: 0 });
    expect(await TicketFeedbackValue.count({ where: { feedback_id: f.id } })).toBe(0);
  });

  it('404 before 422', async () => {
    expectNotFound(await api.put(`${BASE}/999999`, { rating: 9 }), 'ticket feedback');
  });
});

describe('methods the resource does not offer', () => {
  it.each([['post', BASE, 'GET'], ['delete', `${BASE}/1`, 'GET, PUT']] as const)('%s %s is 405', async (method, path, allow) => {
    const res = await request(api.app)[method](path).auth(api.token, 'x');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
  });
});
