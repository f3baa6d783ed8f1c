/**
 * Rules every text of a request follows, whatever the resource: lengths count characters as the
 * utf8mb4 columns do (an emoji is one), rich text that the HTML allow-list empties is missing text,
 * and translations (`<field>:<locale>`) take the field's own length, where an empty one still
 * counts as a translation sent.
 */
import { Department, SlaPlan, Translation } from '../../src/db/models';
import { Joi } from '../../src/lib/validation';
import { useApi, unique, newEmail } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';
import { factories } from '../selfservice/support';

const api = useApi();
const make = factories(api);
const EMOJI = '\u{1F600}';
/** Rich text with nothing the allow-list keeps. */
const EMPTIED = ['<script>alert(1)</script>', '<!-- x -->', '<base href="http://evil.example/">', '<svg><script>x</script></svg>'];

let departmentId: number;
beforeAll(async () => {
  departmentId = (await Department.findOne({ where: { name: 'General Enquiries' } }))!.id;
});

describe('string lengths count characters', () => {
  it('joi min, max and length count an emoji once (and bytes when an encoding is asked)', () => {
    const ok = (schema: any, value: string) => schema.validate(value).error === undefined;
    expect(ok(Joi.string().max(3), EMOJI.repeat(3))).toBe(true);
    expect(ok(Joi.string().max(3), EMOJI.repeat(4))).toBe(false);
    expect(ok(Joi.string().min(2), EMOJI.repeat(2))).toBe(true);
    expect(ok(Joi.string().min(2), EMOJI)).toBe(false);
    expect(ok(Joi.string().length(2), EMOJI.repeat(2))).toBe(true);
    expect(ok(Joi.string().length(2), 'abc')).toBe(false);
    expect(ok(Joi.string().max(4, 'utf8'), EMOJI)).toBe(true);
    expect(ok(Joi.string().max(3, 'utf8'), EMOJI)).toBe(false);
    // A lone surrogate is one character, as it is one UTF-16 unit.
    expect(ok(Joi.string().max(1), '\uD83D')).toBe(true);
  });

  it('a name of 255 emoji fits a varchar(255) name; 256 is refused', async () => {
    const prefix = unique('t');
    const name = `${prefix}${EMOJI.repeat(255 - prefix.length)}`;
    const tag = expectSuccess(await api.post('/api/ticket/tag', { name }), 'Successfully created new tag!');
    expect(tag.name).toBe(name);
    expect([...tag.name]).toHaveLength(255);
    expectError(await api.post('/api/ticket/tag', { name: `${name}${EMOJI}` }), 422, 'The name may not be greater than 255 characters.');
  });

  it('an article excerpt of 255 emoji is taken, in the field and in a translation', async () => {
    const type = await make.type();
    const category = await make.category(type.id);
    const author = await make.operator();
    const excerpt = EMOJI.repeat(255);
    const article = expectSuccess(await api.post('/api/selfservice/article', {
      author_id: author.id, title: unique('Emoji'), text: 'x', category: [category.id], excerpt, 'excerpt:fr': excerpt,
    }), 'Successfully created new article!');
    expect(article.excerpt).toBe(excerpt);
    expectError(await api.post('/api/selfservice/article', {
      author_id: author.id, title: unique('Emoji'), text: 'x', category: [category.id], excerpt: `${excerpt}${EMOJI}`,
    }), 422, 'The excerpt may not be greater than 255 characters.');
  });
});

describe('rich text that the allow-list empties is missing text', () => {
  it.each(EMPTIED)('%s: a canned response, an article, a ticket, a message and a comment are refused and nothing is written', async (html) => {
    expectError(await api.post('/api/ticket/cannedresponse', { name: unique('Canned'), text: html }), 422, 'The text field is required.');
    const canned = expectSuccess(await api.post('/api/ticket/cannedresponse', { name: unique('Canned'), text: 'Kept' }), 'Successfully created new canned response!');
    expectError(await api.put(`/api/ticket/cannedresponse/${canned.id}`, { text: html }), 422, 'The text field is required.');
    expect(expectSuccess(await api.get(`/api/ticket/cannedresponse/${canned.id}`)).text).toBe('Kept');

    const type = await make.type();
    const category = await make.category(type.id);
    const author = await make.operator();
    const title = unique('Emptied');
    expectError(await api.post('/api/selfservice/article', { author_id: author.id, title, text: html, category: [category.id] }), 422, 'The text field is required.');
    expect((await api.get('/api/selfservice/article', { category_id: category.id })).body.count).toBe(0);
    const article = expectSuccess(await api.post('/api/selfservice/article', { author_id: author.id, title, text: 'Body', category: [category.id] }), 'Successfully created new article!');
    expectError(await api.post('/api/selfservice/comment', { article_id: article.id, name: 'Guest', text: html }), 422, 'The text field is required.');
    expect((await api.get('/api/selfservice/comment', { article_id: article.id })).body.count).toBe(0);

    const subject = unique('Emptied');
    const ticketForm = { department: departmentId, status: 1, priority: 1, user_email: newEmail(), subject, send_user_email: 0, send_operators_email: 0 };
    expectError(await api.post('/api/ticket/ticket', { ...ticketForm, text: html }), 422, 'The text field is required.');
    const ticket = expectSuccess(await api.post('/api/ticket/ticket', { ...ticketForm, text: 'First' }), 'Successfully created new ticket!');
    const messages = async () => (await api.get('/api/ticket/message', { ticket_id: ticket.id })).body.count;
    expect(await messages()).toBe(1);
    expectError(await api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: ticket.user_id, text: html, send_user_email: 0, send_operators_email: 0 }), 422, 'The text field is required.');
    expect(await messages()).toBe(1);
    const first = (await api.get('/api/ticket/message', { ticket_id: ticket.id })).body.data[0];
    expectError(await api.put(`/api/ticket/message/${first.id}`, { text: html }), 422, 'The text field is required.');
    expect(expectSuccess(await api.get(`/api/ticket/message/${first.id}`)).text).toBe('First');
  });

  it('markup that keeps something is stored, cleaned', async () => {
    const canned = expectSuccess(await api.post('/api/ticket/cannedresponse', { name: unique('Canned'), text: '<p onclick="x()">Hi<script>x</script></p>' }), 'Successfully created new canned response!');
    expect(canned.text).toBe('<p>Hi</p>');
  });
});

describe('a required field sent empty is missing, whatever its type', () => {
  it('an empty integer, id or email that a create requires says the field is required, and nothing is written', async () => {
    const subject = unique('Empty');
    const form = { department: departmentId, status: 1, priority: 1, user_email: newEmail(), subject, text: 'Body', send_user_email: 0, send_operators_email: 0 };
    expectError(await api.post('/api/ticket/ticket', { ...form, department: '' }), 422, 'The department field is required.');
    expectError(await api.post('/api/ticket/ticket', { ...form, status: ' ' }), 422, 'The status field is required.');
    expectError(await api.post('/api/ticket/ticket', { ...form, user_email: undefined, user_id: undefined, priority: '' }), 422, /required/);
    expect((await api.get('/api/ticket/ticket', { search: subject })).body.count).toBe(0);
  });

  it('an empty integer that an update may leave out is still not an integer (a priority cannot be cleared)', async () => {
    const ticket = expectSuccess(await api.post('/api/ticket/ticket', { department: departmentId, status: 1, priority: 1, user_email: newEmail(), subject: unique('Opt'), text: 'Body', send_user_email: 0, send_operators_email: 0 }), 'Successfully created new ticket!');
    expectError(await api.put(`/api/ticket/ticket/${ticket.id}`, { priority: '' }), 422, 'The priority must be an integer.');
    expect(expectSuccess(await api.get(`/api/ticket/ticket/${ticket.id}`)).priority_id).toBe(1);
  });
});

describe('translations', () => {
  it('an update whose only translation is empty removes the stored ones (the spec: a translation included replaces the rest)', async () => {
    const status = expectSuccess(await api.post('/api/ticket/status', { name: unique('Tr'), 'name:fr': 'FR', 'name:de': 'DE' }), 'Successfully created new status!');
    expect(status.translations.map((t: any) => t.locale).sort()).toEqual(['de', 'fr']);
    const updated = expectSuccess(await api.put(`/api/ticket/status/${status.id}`, { name: status.name, 'name:fr': '' }), 'Successfully updated the status!');
    expect(updated.translations).toEqual([]);
    expect(await Translation.count({ where: { record_type: 'ticket_status', record_id: status.id } })).toBe(0);
  });

  it('an update with one translation kept and one emptied keeps just the kept one', async () => {
    const priority = expectSuccess(await api.post('/api/ticket/priority', { name: unique('Tr'), 'name:fr': 'FR', 'name:de': 'DE' }), 'Successfully created new priority!');
    const updated = expectSuccess(await api.put(`/api/ticket/priority/${priority.id}`, { 'name:fr': 'FR2', 'name:de': ' ' }), 'Successfully updated the priority!');
    expect(updated.translations).toEqual([expect.objectContaining({ locale: 'fr', name: 'FR2' })]);
  });

  it('an update with no translation leaves them as they are', async () => {
    const tag = expectSuccess(await api.post('/api/ticket/tag', { name: unique('Tr'), 'name:fr': 'FR' }), 'Successfully created new tag!');
    const updated = expectSuccess(await api.put(`/api/ticket/tag/${tag.id}`, { name: unique('Tr2') }), 'Successfully updated the tag!');
    expect(updated.translations).toEqual([expect.objectContaining({ locale: 'fr', name: 'FR' })]);
  });

  it('a translation takes the length of its field: a name 255 characters, a rich text more', async () => {
    expectError(await api.post('/api/ticket/status', { name: unique('Tr'), 'name:fr': 'x'.repeat(256) }), 422, 'The name:fr may not be greater than 255 characters.');
    expectSuccess(await api.post('/api/ticket/status', { name: unique('Tr'), 'name:fr': EMOJI.repeat(255) }), 'Successfully created new status!');
    const canned = expectSuccess(await api.post('/api/ticket/cannedresponse', { name: unique('Canned'), text: 'x', 'text:fr': 'y'.repeat(70000) }), 'Successfully created new canned response!');
    expect(expectSuccess(await api.get(`/api/ticket/cannedresponse/${canned.id}`, { lang: 'fr' })).text).toHaveLength(70000);
  });

  it('a rich text translation that the allow-list empties is no translation', async () => {
    const canned = expectSuccess(await api.post('/api/ticket/cannedresponse', { name: unique('Canned'), text: 'x', 'text:fr': 'Bonjour' }), 'Successfully created new canned response!');
    const updated = expectSuccess(await api.put(`/api/ticket/cannedresponse/${canned.id}`, { 'text:fr': '<base href="http://e">' }), 'Successfully updated the canned response!');
    expect(updated.translations ?? []).toEqual([]);
    expect(expectSuccess(await api.get(`/api/ticket/cannedresponse/${canned.id}`, { lang: 'fr' })).text).toBe('x');
  });
});

describe('line breaks and control characters', () => {
  it('descriptions keep their line breaks: departments, self-service types, SLA plans, webhooks, and their translations', async () => {
    const text = 'First line.\nSecond line.';
    const department = expectSuccess(await api.post('/api/ticket/department', { name: unique('Dept'), description: text, 'description:fr': text }), 'Successfully created new department!');
    expect(department.description).toBe(text);
    expect(department.translations[0]).toMatchObject({ locale: 'fr', description: text });
    const type = await make.type();
    expect(expectSuccess(await api.put(`/api/selfservice/type/${type.id}`, { description: text }), 'Successfully updated the type!').description).toBe(text);
    const plan = await SlaPlan.create({ name: unique('Plan '), enabled: 1, business_hours: 0, timezone: 'UTC' });
    expect(expectSuccess(await api.put(`/api/ticket/slaplan/${plan.id}`, { description: text }), 'Successfully updated the SLA plan!').description).toBe(text);
    const hook = expectSuccess(await api.post('/api/core/webhook', { url: 'https://93.184.215.14/hook', events: ['*'], description: text }), 'Successfully created new webhook!');
    expect(hook.description).toBe(text);
    await api.del(`/api/core/webhook/${hook.id}`);
    // A name is one line.
    expectError(await api.post('/api/ticket/department', { name: 'Two\nlines' }), 422, 'The name must not contain control characters.');
  });

  it('a ticket search, and a custom field filter, refuse control characters as every one-line text does', async () => {
    for (const search of ['printer\u0001', 'printer\u0000', 'a\nb']) {
      expectError(await api.get('/api/ticket/ticket', { search }), 422, 'The search must not contain control characters.');
    }
    expectError(await api.get('/api/ticket/ticket', { customfield: { 1: 'x\u0000' } }), 422, 'The customfield.1 must not contain control characters.');
  });

  it('a search error names its position in characters (an emoji is one)', async () => {
    expectError(await api.get('/api/ticket/ticket', { search: `${EMOJI.repeat(3)} "x` }), 422, 'The search is invalid at position 5: the quote is not closed.');
    expectError(await api.get('/api/ticket/ticket', { search: `${EMOJI} status:` }), 422, 'The search is invalid at position 10: status: needs a value.');
  });

  it('lang is checked on a show as on a list', async () => {
    expectError(await api.get('/api/ticket/status/1', { lang: '!!' }), 422, 'The lang format is invalid.');
    expectSuccess(await api.get('/api/ticket/status/1', { lang: 'fr' }));
  });
});
