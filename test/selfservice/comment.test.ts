import { Op } from 'sequelize';
import { ArticleComment, SpamRule } from '../../src/db/models';
import { SPAM_TEXT_LIMIT, compileRule, spamReadLimit } from '../../src/core/spam';
import { useApi, unique } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { factories, ids } from './support';

const api = useApi();
const make = factories(api);
const BASE = '/api/selfservice/comment';
const COMMENT_KEYS = [
  'id', 'article_id', 'type_id', 'author_id', 'name', 'text', 'parent_id', 'root_parent_id', 'rating', 'status', 'notify_reply',
  'created_at', 'updated_at',
];

const comment = async (body: Record<string, unknown>) => expectSuccess(await api.post(BASE, { name: 'Guest', text: 'Very helpful, thanks.', ...body }), 'Successfully created new comment!');

describe('POST /api/selfservice/comment', () => {
  it('creates a guest comment awaiting moderation, in the article\'s type', async () => {
    const article = await make.article();
    const data = await comment({ article_id: article.id, name: 'Jo Bloggs', text: 'Thanks!' });
    expect(Object.keys(data).sort()).toEqual([...COMMENT_KEYS].sort());
    expect(data).toMatchObject({
      article_id: article.id, type_id: article.types[0].id, author_id: null, name: 'Jo Bloggs', text: 'Thanks!', parent_id: null,
      root_parent_id: null, rating: 0, status: 0, notify_reply: 0,
    });
    expect(expectSuccess(await api.get(`${BASE}/${data.id}`))).toEqual(data);
  });

  it('an author\'s comment takes their name; an operator\'s is published at once', async () => {
    const article = await make.article();
    const user = await make.user({ firstname: 'Uma', lastname: 'Reader' });
    const op = await make.operator({ firstname: 'Otto', lastname: 'Staff' });
    expect(await comment({ article_id: article.id, name: undefined, author_id: user.id })).toMatchObject({ author_id: user.id, name: 'Uma Reader', status: 0 });
    expect(await comment({ article_id: article.id, name: undefined, author_id: op.id })).toMatchObject({ author_id: op.id, name: 'Otto Staff', status: 1 });
    expect(await comment({ article_id: article.id, status: 1, notify_reply: 1 })).toMatchObject({ status: 1, notify_reply: 1 });
  });

  it('a user comments in their own brand\'s types only (the same address in another brand is another person); an operator in any', async () => {
    const other = await make.brand();
    const [home, away] = [await make.type(), await make.type({ brand_id: other.id })];
    const article = await make.article({ category: [(await make.category(home.id)).id, (await make.category(away.id)).id] });
    const onlyHome = await make.article({ category: [(await make.category(home.id)).id] });
    const stranger = await make.user({ brand_id: other.id });
    // No type given: the first of the article's types in the user's brand, not the article's first.
    expect((await comment({ article_id: article.id, author_id: stranger.id })).type_id).toBe(away.id);
    expectError(await api.post(BASE, { article_id: article.id, author_id: stranger.id, type_id: home.id, text: 'x' }), 422, 'The selected author id is invalid.');
    expectError(await api.post(BASE, { article_id: onlyHome.id, author_id: stranger.id, text: 'x' }), 422, 'The selected author id is invalid.');
    expect(await ArticleComment.count({ where: { article_id: onlyHome.id } })).toBe(0);
    expect((await comment({ article_id: onlyHome.id, author_id: (await make.operator()).id })).type_id).toBe(home.id);
  });

  it('a comment made in a type its article leaves has no type, as when the type is deleted', async () => {
    const [first, second] = [await make.type(), await make.type()];
    const article = await make.article({ category: [(await make.category(first.id)).id] });
    const made = await comment({ article_id: article.id });
    expect(made.type_id).toBe(first.id);
    expectSuccess(await api.put(`/api/selfservice/article/${article.id}`, { category: [(await make.category(second.id)).id] }), 'Successfully updated the article!');
    const now = expectSuccess(await api.get(`${BASE}/${made.id}`));
    expect(now.type_id).toBeNull();
    expect(ids(expectList(await api.get(BASE, { type_id: first.id })))).not.toContain(made.id);
  });

  it('replies name their parent and the first comment of the thread', async () => {
    const article = await make.article();
    const first = await comment({ article_id: article.id });
    const reply = await comment({ article_id: article.id, parent_id: first.id });
    const deeper = await comment({ article_id: article.id, parent_id: reply.id });
    expect([reply.parent_id, reply.root_parent_id, deeper.parent_id, deeper.root_parent_id]).toEqual([first.id, first.id, reply.id, first.id]);
  });

  it('422', async () => {
    const [type, other] = [await make.type(), await make.type()];
    const article = await make.article({ category: [(await make.category(type.id)).id] });
    const foreign = await comment({ article_id: (await make.article()).id });
    const ok = { article_id: article.id, name: 'Guest', text: 'Hello there' };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...ok, article_id: undefined }, 'The article id field is required.'],
      [{ ...ok, article_id: 999999 }, 'The selected article id is invalid.'],
      [{ ...ok, name: undefined }, 'The name field is required.'],
      [{ ...ok, text: '' }, 'The text field is required.'],
      [{ ...ok, parent_id: foreign.id }, 'The selected parent id is invalid.'],
      [{ ...ok, parent_id: 999999 }, 'The selected parent id is invalid.'],
      [{ ...ok, author_id: 999999 }, 'The selected author id is invalid.'],
      [{ ...ok, type_id: other.id }, 'The selected type id is invalid.'],
      [{ ...ok, status: 3 }, 'The selected status is invalid.'],
    ];
    for (const [body, message] of cases) expectError(await api.post(BASE, body), 422, message);
    expect(await ArticleComment.count({ where: { article_id: article.id } })).toBe(0);
    expect((await comment({ ...ok, type_id: type.id })).type_id).toBe(type.id);
  });
});

describe('spam rules', () => {
  const rules: number[] = [];
  const rule = async (values: Partial<SpamRule>) => {
    const r = await SpamRule.create({ type: 0, event_message: 1, event_comment: 1, ...values } as any);
    rules.push(r.id);
    return r;
  };
  afterAll(async () => {
    await SpamRule.destroy({ where: { id: { [Op.in]: rules } } });
  });

  it('refuse a comment whose text matches a rule for comments, and store nothing', async () => {
    const article = await make.article();
    const word = unique('cheapwatches');
    await rule({ text: `${word}\\d*` });
    const res = await api.post(BASE, { article_id: article.id, name: 'Spammer', text: `Buy ${word.toUpperCase()}42 now` });
    expectError(res, 422, 'The comment was blocked due to spam.');
    expect(await ArticleComment.count({ where: { article_id: article.id } })).toBe(0);
  });

  it('read rich text as a reader sees it: markup inside a word or a no-break space does not hide it', async () => {
    const article = await make.article();
    const word = unique('pillz').toLowerCase();
    await rule({ text: `cheap ${word}` });
    for (const text of [`<p>cheap <i>${word}</i></p>`, `<p>cheap&nbsp;${word.slice(0, 3)}<b>${word.slice(3)}</b></p>`]) {
      expectError(await api.post(BASE, { article_id: article.id, name: 'Spammer', text }), 422, 'The comment was blocked due to spam.');
    }
    expect(await ArticleComment.count({ where: { article_id: article.id } })).toBe(0);
    expect((await comment({ article_id: article.id, name: 'Ann', text: `<p>cheap, but not ${word}</p>` })).status).toBe(0);
  });

  it('check the sender (the name, or the author\'s email) with sender rules', async () => {
    const article = await make.article();
    const domain = `${unique('spam').toLowerCase()}.example`;
    await rule({ text: `@${domain.replace(/\./g, '\\.')}$`, type: 1 });
    const nameRule = unique('Bot');
    await rule({ text: nameRule, type: 2 });
    const spammer = await make.user({ email: `x@${domain}` });
    expectError(await api.post(BASE, { article_id: article.id, author_id: spammer.id, text: 'Fine text' }), 422, 'The comment was blocked due to spam.');
    expectError(await api.post(BASE, { article_id: article.id, name: `${nameRule} 3000`, text: 'Fine text' }), 422, 'The comment was blocked due to spam.');
    // A content rule does not look at the sender; a sender rule not at the text.
    expect((await comment({ article_id: article.id, name: 'Ann', text: `write to me at x@${domain}` })).status).toBe(0);
  });

  it('ignore rules that are not for comments', async () => {
    const article = await make.article();
    const word = unique('messageonly');
    await rule({ text: word, event_comment: 0 });
    expect((await comment({ article_id: article.id, text: `about ${word}` })).text).toBe(`about ${word}`);
  });

  it('bound one check: with the audit\'s 256 costly rules every rule reads the same first characters of a comment, and the rest is not checked', async () => {
    const article = await make.article();
    const word = unique('spamword').toLowerCase();
    await rule({ text: word });
    // Each defeats RE2's DFA on a/b text: unbounded, they ran one 16 KB comment for 7 s.
    const audit = await SpamRule.bulkCreate(Array.from({ length: 256 }, (_, i) => ({
      type: 0, event_message: 0, event_comment: 1, text: `(?:a|b)*a(?:a|b){${60 + Math.floor((i * 150) / 255)}}[^ab]`,
    })) as any);
    rules.push(...audit.map((r) => r.id));
    let x = 987654321;
    const text = Array.from({ length: SPAM_TEXT_LIMIT }, () => (((x = (x * 1103515245 + 12345) & 0x7fffffff) >> 16) & 1 ? 'a' : 'b')).join('');
    // What each rule reads (spamMatch): type 0 the text, 1 the name, 2 both.
    const name = 'Guest';
    const applied = (await SpamRule.findAll({ where: { event_comment: 1 } })).map((r) => ({ r, c: compileRule(r.text) })).filter(({ c }) => !c.refusal);
    const limit = spamReadLimit(applied.flatMap(({ r, c }) => (r.type === 0 ? [text] : r.type === 1 ? [name] : [text, name]).map((t) => ({ size: c.size, length: t.length }))));
    expect(limit).toBeLessThan(2000);
    // The word after 220 b's: none of the costly rules matches there (an a, then 60-210 a's or b's, then another character).
    const at = (offset: number) => `${text.slice(0, offset - 220)}${'b'.repeat(220)}${word}${text.slice(offset + word.length)}`;
    const res = await api.post(BASE, { article_id: article.id, name, text: at(limit - word.length) });
    expectError(res, 422, 'The comment was blocked due to spam.');
    expect((await comment({ article_id: article.id, name, text: at(limit - word.length + 1) })).status).toBe(0);
  });
});

describe('GET /api/selfservice/comment', () => {
  it('filters by article, status and parent', async () => {
    const article = await make.article();
    const a = await comment({ article_id: article.id });
    const b = await comment({ article_id: article.id, status: 1, parent_id: a.id });
    await comment({ article_id: (await make.article()).id });
    const list = async (q: Record<string, unknown>) => ids(expectList(await api.get(BASE, { article_id: article.id, ...q })));
    expect(await list({})).toEqual([a.id, b.id]);
    expect(await list({ status: 1 })).toEqual([b.id]);
    expect(await list({ status: 0 })).toEqual([a.id]);
    expect(await list({ parent_id: 0 })).toEqual([a.id]);
    expect(await list({ parent_id: a.id })).toEqual([b.id]);
    expect(await list({ order_direction: 'desc', limit: 1 })).toEqual([b.id]);
    expectError(await api.get(BASE, { status: 5 }), 422, 'The selected status is invalid.');
  });

  it('404 with the label comment', async () => {
    expectNotFound(await api.get(`${BASE}/999999`), 'comment');
    expectNotFound(await api.put(`${BASE}/999999`, { status: 1 }), 'comment');
    expectNotFound(await api.del(`${BASE}/999999`), 'comment');
  });
});

describe('moderation', () => {
  it('publishes, marks as spam, edits; deleting a comment deletes its replies', async () => {
    const article = await make.article();
    const first = await comment({ article_id: article.id });
    const reply = await comment({ article_id: article.id, parent_id: first.id });
    expect(expectSuccess(await api.put(`${BASE}/${first.id}`, { status: 1 }), 'Successfully updated the comment!')).toMatchObject({ status: 1, text: first.text });
    expect(expectSuccess(await api.put(`${BASE}/${reply.id}`, { status: 2, text: 'Edited' }), 'Successfully updated the comment!')).toMatchObject({ status: 2, text: 'Edited' });
    expectError(await api.put(`${BASE}/${reply.id}`, { status: 7 }), 422, 'The selected status is invalid.');
    expectError(await api.put(`${BASE}/${reply.id}`, { text: '' }), 422, 'The text field is required.');
    expectDeleted(await api.del(`${BASE}/${first.id}`), 'comment');
    expectNotFound(await api.get(`${BASE}/${reply.id}`), 'comment');
  });
});
