import { useApi, unique, nowSec } from '../helpers/app';
import { expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { expectTimestamps } from './support';

const api = useApi();
const BASE = '/api/core/spamrule';
const FIELDS = ['created_at', 'event_comment', 'event_message', 'id', 'text', 'type', 'updated_at'];

async function create(form: Record<string, unknown>): Promise<any> {
  return expectSuccess(await api.post(BASE, form), 'Successfully created new spam rule!');
}

async function show(id: number): Promise<any> {
  return expectSuccess(await api.get(`${BASE}/${id}`));
}

/** Every spam rule, newest first (the list has no filters beyond paging). */
async function listAll(): Promise<any[]> {
  return expectList(await api.get(BASE, { order_direction: 'desc', limit: 1000 }));
}

describe('POST /api/core/spamrule', () => {
  it.each([0, 1, 2])('creates a rule of type %i with the defaults: event_message and event_comment 1', async (type) => {
    const text = unique('viagra');
    const before = nowSec();
    const rule = await create({ text, type });
    expect(Object.keys(rule).sort()).toEqual(FIELDS);
    expect(rule).toMatchObject({ text, type, event_message: 1, event_comment: 1 });
    expect(Number.isInteger(rule.id)).toBe(true);
    expectTimestamps(rule, before);
  });

  it('stores a regular expression verbatim and the event flags given', async () => {
    const text = `^(cheap|free)\\s+${unique('w')}[0-9]+$`;
    const rule = await create({ text, type: 2, event_message: 0, event_comment: 1 });
    expect(rule).toMatchObject({ text, type: 2, event_message: 0, event_comment: 1 });
    expect((await show(rule.id)).text).toBe(text);
  });

  it('keeps leading and trailing spaces, which a regular expression matches, on create and update', async () => {
    const text = ` ${unique('cheap')} `;
    const rule = await create({ text, type: 0 });
    expect(rule.text).toBe(text);
    expect((await show(rule.id)).text).toBe(text);
    const spaced = `\t${unique('free')}  `;
    expect(expectSuccess(await api.put(`${BASE}/${rule.id}`, { text: spaced }), 'Successfully updated the spam rule!').text).toBe(spaced);
    expect((await show(rule.id)).text).toBe(spaced);
  });

  it('refuses a text of only whitespace as required, on create and update', async () => {
    expectError(await api.post(BASE, { text: '   ', type: 0 }), 422, 'The text field is required.');
    const rule = await create({ text: unique('ws'), type: 0 });
    expectError(await api.put(`${BASE}/${rule.id}`, { text: ' \t ' }), 422, 'The text field is required.');
    expect(await show(rule.id)).toEqual(rule);
  });

  it('accepts a text of multi-byte characters up to the 256-character limit and returns it intact', async () => {
    const head = unique('r');
    const text = `${head}${'ß'.repeat(256 - head.length)}`;
    const rule = await create({ text, type: 0 });
    expect(rule.text).toBe(text);
    expect((await show(rule.id)).text).toBe(text);
  });

  it('refuses a text longer than 256 characters, on create and update', async () => {
    const text = `${unique('long')}${'ß'.repeat(256)}`;
    expectError(await api.post(BASE, { text, type: 0 }), 422, 'The text may not be greater than 256 characters.');
    expect((await listAll()).filter((r) => r.text === text)).toEqual([]);
    const rule = await create({ text: unique('short'), type: 0 });
    expectError(await api.put(`${BASE}/${rule.id}`, { text }), 422, 'The text may not be greater than 256 characters.');
    expect(await show(rule.id)).toEqual(rule);
  });

  // The audit's rule: 242 characters that compile to ~12,000 instructions, which ran one 60 KB
  // comment for 20 s (test/core/spam.test.ts has the measurements).
  const alternatives = `(${'abcdefghijklmnopqrstuvwxyz'.split('').join('|')}| |,|\\.){1,999}`;
  const auditPattern = (word: string) => `${alternatives.repeat(3)}(?:${word})`;
  const tooLarge = /^The text is too large a pattern: it compiles to \d+ instructions, at most 512 are allowed \(a counted repetition such as \{1,100\} repeats what it applies to that many times\)\.$/;

  it('refuses a pattern that compiles to more than 512 instructions, on create and update', async () => {
    const text = auditPattern(unique('w'));
    expect(text.length).toBeLessThanOrEqual(256);
    expectError(await api.post(BASE, { text, type: 2 }), 422, tooLarge);
    expect((await listAll()).filter((r) => r.text === text)).toEqual([]);
    const rule = await create({ text: unique('fits'), type: 0 });
    expectError(await api.put(`${BASE}/${rule.id}`, { text }), 422, tooLarge);
    expect(await show(rule.id)).toEqual(rule);
    // Counted repetitions within the limit are fine.
    const fits = `${unique('c')}(?:[a-z ,.]{1,100}casino){2}`;
    expect((await create({ text: fits, type: 0 })).text).toBe(fits);
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['no text', { type: 0 }, 'The text field is required.'],
    ['an empty text', { text: '', type: 0 }, 'The text field is required.'],
    ['no type', { text: 'casino' }, 'The type field is required.'],
    ['a type of 3', { text: 'casino', type: 3 }, 'The selected type is invalid.'],
    ['a type of -1', { text: 'casino', type: -1 }, 'The selected type is invalid.'],
    ['a type that is no number', { text: 'casino', type: 'content' }, 'The selected type is invalid.'],
    ['a type of 1.5', { text: 'casino', type: 1.5 }, 'The selected type is invalid.'],
    ['an event_message that is no boolean', { text: 'casino', type: 0, event_message: 'yes' }, 'The event message field must be true or false.'],
    ['an event_comment that is no boolean', { text: 'casino', type: 0, event_comment: 5 }, 'The event comment field must be true or false.'],
  ];
  it.each(invalid)('answers 422 to %s and creates nothing', async (_name, body, message) => {
    const text = unique('invalid');
    const withText = 'text' in body && body.text !== '' ? { ...body, text } : body;
    expectError(await api.post(BASE, withText), 422, message);
    expect((await listAll()).filter((r) => r.text === text)).toEqual([]);
  });
});

describe('GET /api/core/spamrule/{id}', () => {
  it('shows the rule as it was created', async () => {
    const rule = await create({ text: unique('show'), type: 1 });
    expect(await show(rule.id)).toEqual(rule);
  });

  it.each(['4294967295', 'abc'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.get(`${BASE}/${id}`), 'spam rule');
  });
});

describe('GET /api/core/spamrule', () => {
  it('lists the rules created, in id order', async () => {
    const a = await create({ text: unique('list'), type: 0 });
    const b = await create({ text: unique('list'), type: 1, event_comment: 0 });
    const asc = expectList(await api.get(BASE, { limit: 1000 }));
    const ids = asc.map((r) => r.id);
    expect(ids.indexOf(a.id)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(b.id)).toBeGreaterThan(ids.indexOf(a.id));
    expect(asc.find((r) => r.id === b.id)).toEqual(b);
    expect([...ids].sort((x, y) => x - y)).toEqual(ids);
  });

  it('counts every rule, not the page', async () => {
    await create({ text: unique('count'), type: 0 });
    await create({ text: unique('count'), type: 0 });
    const all = await listAll();
    const res = await api.get(BASE, { limit: 1 });
    expect(expectList(res)).toHaveLength(1);
    expect(res.body.count).toBe(all.length);
  });

  it('sorts by type', async () => {
    await create({ text: unique('sort'), type: 2 });
    await create({ text: unique('sort'), type: 0 });
    const data = expectList(await api.get(BASE, { order_column: 'type', order_direction: 'desc', limit: 1000 }));
    const types = data.map((r) => r.type);
    expect(types).toEqual([...types].sort((x, y) => y - x));
  });
});

describe('PUT /api/core/spamrule/{id}', () => {
  it('changes only the fields given: no defaults are applied on update', async () => {
    const rule = await create({ text: unique('upd'), type: 1, event_message: 0, event_comment: 0 });
    const text = unique('changed');
    const updated = expectSuccess(await api.put(`${BASE}/${rule.id}`, { text }), 'Successfully updated the spam rule!');
    expect(updated).toEqual({ ...rule, text, updated_at: updated.updated_at });
    expect(updated.updated_at).toBeGreaterThanOrEqual(rule.updated_at);
    expect(await show(rule.id)).toEqual(updated);
  });

  it('updates every field', async () => {
    const rule = await create({ text: unique('all'), type: 0 });
    const text = unique('every');
    const updated = expectSuccess(
      await api.put(`${BASE}/${rule.id}`, { text, type: 2, event_message: 0, event_comment: 0 }),
      'Successfully updated the spam rule!',
    );
    expect(updated).toMatchObject({ id: rule.id, text, type: 2, event_message: 0, event_comment: 0, created_at: rule.created_at });
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['an empty text', { text: '' }, 'The text field is required.'],
    ['a type of 9', { type: 9, event_message: 0 }, 'The selected type is invalid.'],
    ['an event_message that is no boolean', { event_message: 'sure', text: 'must not be saved' }, 'The event message field must be true or false.'],
  ];
  it.each(invalid)('answers 422 to %s and leaves the rule unchanged', async (_name, body, message) => {
    const rule = await create({ text: unique('keep'), type: 1 });
    expectError(await api.put(`${BASE}/${rule.id}`, body), 422, message);
    expect(await show(rule.id)).toEqual(rule);
  });

  it.each(['4294967295', 'abc'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.put(`${BASE}/${id}`, { text: 'x' }), 'spam rule');
  });
});

describe('DELETE /api/core/spamrule/{id}', () => {
  it('deletes the rule: data null, then 404', async () => {
    const rule = await create({ text: unique('del'), type: 0 });
    const res = await api.del(`${BASE}/${rule.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'success', message: 'Successfully deleted the spam rule!', data: null });
    expectNotFound(await api.get(`${BASE}/${rule.id}`), 'spam rule');
    expectNotFound(await api.del(`${BASE}/${rule.id}`), 'spam rule');
    expect((await listAll()).map((r) => r.id)).not.toContain(rule.id);
  });

  it.each(['4294967295', 'abc'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.del(`${BASE}/${id}`), 'spam rule');
  });
});
