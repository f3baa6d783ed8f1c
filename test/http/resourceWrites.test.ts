/**
 * The resource builder's writes (src/http/resource.ts): an unknown record is a 404 whatever the
 * body, but its existence is read before the write only when the body is refused (a valid one's
 * transaction reads the record, locked, and answers 404 itself); and an update stamps
 * `updated_at` with a statement of its own only when the record's own save has not already
 * stamped it this second (an update of related rows only is an edit too), and not at all when
 * the update wrote nothing (every value as stored: no `*.updated` event either).
 */
import { Op } from 'sequelize';
import { Article, DomainEvent, SpamRule, Ticket, User } from '../../src/db/models';
import { newEmail, nowSec, phoneNumbers, unique, useApi } from '../helpers/app';
import { expectError, expectNotFound, expectSuccess } from '../helpers/envelope';
import { countWarm } from '../helpers/queries';
import { ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';
import { factories } from '../selfservice/support';

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);
const selfservice = factories(api);
const newPhone = phoneNumbers('8');
const MISSING = 2_000_000_000;

/**
 * The statements of a request, warm (helpers/queries countWarm: what it caches is loaded just
 * before by the same request, which for a write is a write too), without Sequelize's
 * `Executing (<connection>): ` and a token's use (recorded once a minute).
 */
async function statementsOf(request: () => PromiseLike<any>) {
  const { result, queries } = await countWarm(request);
  return { result, sql: queries.map((q) => q.replace(/^Executing \([^)]*\): /, '')).filter((q) => !/api_tokens/.test(q)) };
}

describe('a 404 before a 422, reading the record first only for a refused body', () => {
  it('update: a valid body starts the transaction at once; a refused one reads whether the record exists', async () => {
    const user = await f.user();
    const valid = await statementsOf(() => api.put(`/api/user/user/${user.id}`, { firstname: 'Ada' }));
    expect(expectSuccess(valid.result, 'Successfully updated the user!').firstname).toBe('Ada');
    expect(valid.sql[0]).toBe('START TRANSACTION;');

    const refused = await statementsOf(() => api.put(`/api/user/user/${user.id}`, { country: 'not a country' }));
    expectError(refused.result, 422, 'The country format is invalid.');
    expect(refused.sql).toEqual([expect.stringMatching(/^SELECT .* FROM `users` WHERE `id` IN \(\?\) AND `type` = \? ORDER BY `id` ASC$/)]);
    expect((await User.findByPk(user.id))!.firstname).toBe('Ada');

    expectNotFound(await api.put(`/api/user/user/${MISSING}`, { firstname: 'Ada' }), 'user');
    expectNotFound(await api.put(`/api/user/user/${MISSING}`, { country: 'not a country' }), 'user');
    // A user is not found as an operator, body refused or not.
    expectNotFound(await api.put(`/api/user/operator/${user.id}`, { firstname: 'Ada' }), 'operator');
    expectNotFound(await api.put(`/api/user/operator/${user.id}`, { email: 'not an address' }), 'operator');
  });

  it('a write action on a record: the same', async () => {
    const ticket = await f.ticket();
    expectNotFound(await api.post(`/api/ticket/ticket/${MISSING}/merge`, { ids: [ticket.id] }), 'ticket');
    expectNotFound(await api.post(`/api/ticket/ticket/${MISSING}/merge`, {}), 'ticket');
    expectError(await api.post(`/api/ticket/ticket/${ticket.id}/merge`, {}), 422, 'The ids field is required.');
  });

  it('create under a parent: an unknown parent is a 404 whatever the body', async () => {
    const department = await f.department();
    const path = (id: number) => `/api/ticket/department/${id}/email`;
    const refused = await statementsOf(() => api.post(path(department.id), {}));
    expect(refused.result.status).toBe(422);
    expect(refused.sql).toEqual([expect.stringMatching(/FROM `departments` WHERE `id` IN \(\?\) ORDER BY `id` ASC$/)]);
    expectNotFound(await api.post(path(MISSING), {}), 'department');
    expectNotFound(await api.post(path(MISSING), { address: newEmail('dept') }), 'department');
    let n = 0;
    const valid = await statementsOf(() => api.post(path(department.id), { address: newEmail(`dept${n++}`) }));
    expect(expectSuccess(valid.result, 'Successfully created new department email!').department_id).toBe(department.id);
    expect(valid.sql[0]).toBe('START TRANSACTION;');
  });
});

describe('updated_at on an update', () => {
  it('a save that stamped the record this second is not stamped again', async () => {
    const { id } = await f.ticket();
    // A second may turn between the save and the check (then the stamp is due): of three updates, one in a second suffices.
    const runs = [];
    let n = 0;
    for (let i = 0; i < 3; i++) runs.push(await statementsOf(() => api.put(`/api/ticket/ticket/${id}`, { subject: `Renamed ${++n}` })));
    const updates = runs.map(({ sql }) => sql.filter((q) => /^UPDATE `tickets`/.test(q)));
    expect(updates.map((u) => u.length)).toContain(1);
    for (const u of updates) expect(u[0]).toMatch(/^UPDATE `tickets` SET `subject` = \?, `updated_at` = \? WHERE `id` = \?/);
    const data = expectSuccess(runs[2].result, 'Successfully updated the ticket!');
    expect(data.subject).toBe(`Renamed ${n}`);
    expect(data.updated_at).toBe((await Ticket.findByPk(id))!.updated_at);
    expect(data.updated_at).toBeGreaterThanOrEqual(nowSec() - 5);
  });

  it('an update of related rows only moves it too', async () => {
    const user = await f.user();
    await User.update({ updated_at: 1_000_000 }, { where: { id: user.id }, hooks: false });
    const data = expectSuccess(await api.put(`/api/user/user/${user.id}`, { phone: [newPhone().e164] }), 'Successfully updated the user!');
    expect(data.phonenumbers).toHaveLength(1);
    expect(data.updated_at).toBeGreaterThanOrEqual(nowSec() - 5);
    expect((await User.findByPk(user.id))!.updated_at).toBe(data.updated_at);
  });
});

describe('an update that changes nothing', () => {
  const OLD = 1_000_000;
  /** The events emitted since `after` (an event id) about the record, by name. */
  async function eventsAbout(after: number, key: string, id: number): Promise<string[]> {
    const rows = await DomainEvent.findAll({ where: { id: { [Op.gt]: after } }, order: [['id', 'ASC']] });
    return rows.filter((e) => JSON.parse(e.payload)[key] === id).map((e) => e.name);
  }
  const lastEvent = async () => (await DomainEvent.max<number, DomainEvent>('id')) ?? 0;

  it('answers success with the record, and leaves updated_at alone (the builder\'s own update)', async () => {
    const rule = expectSuccess(await api.post('/api/core/spamrule', { text: unique('same'), type: 1 }), 'Successfully created new spam rule!');
    await SpamRule.update({ updated_at: OLD }, { where: { id: rule.id }, hooks: false });
    const same = await statementsOf(() => api.put(`/api/core/spamrule/${rule.id}`, { text: rule.text, type: 1, event_message: 1 }));
    expect(expectSuccess(same.result, 'Successfully updated the spam rule!')).toMatchObject({ text: rule.text, type: 1, updated_at: OLD });
    expect(same.sql.filter((q) => /^(UPDATE|INSERT|DELETE)/.test(q))).toEqual([]);
    // A change still moves it.
    expect(expectSuccess(await api.put(`/api/core/spamrule/${rule.id}`, { type: 2 }), 'Successfully updated the spam rule!').updated_at).toBeGreaterThanOrEqual(nowSec() - 5);
  });

  it('of a user emits no user.updated; a change emits one, and so does a change of related rows only', async () => {
    const user = await f.user();
    const stored = expectSuccess(await api.get(`/api/user/user/${user.id}`));
    await User.update({ updated_at: OLD }, { where: { id: user.id }, hooks: false });
    let cursor = await lastEvent();
    const same = expectSuccess(await api.put(`/api/user/user/${user.id}`, {
      firstname: stored.firstname, lastname: stored.lastname, email: stored.email, active: stored.active, country: stored.country,
    }), 'Successfully updated the user!');
    expect(same).toMatchObject({ firstname: stored.firstname, email: stored.email, updated_at: OLD });
    expect((await User.findByPk(user.id))!.updated_at).toBe(OLD);
    expect(await eventsAbout(cursor, 'userId', user.id)).toEqual([]);

    cursor = await lastEvent();
    const renamed = expectSuccess(await api.put(`/api/user/user/${user.id}`, { firstname: 'Renamed' }), 'Successfully updated the user!');
    expect(renamed.updated_at).toBeGreaterThanOrEqual(nowSec() - 5);
    expect(await eventsAbout(cursor, 'userId', user.id)).toEqual(['user.updated']);

    await User.update({ updated_at: OLD }, { where: { id: user.id }, hooks: false });
    cursor = await lastEvent();
    const phoned = expectSuccess(await api.put(`/api/user/user/${user.id}`, { firstname: 'Renamed', phone: [newPhone().e164] }), 'Successfully updated the user!');
    expect(phoned.updated_at).toBeGreaterThanOrEqual(nowSec() - 5);
    expect(await eventsAbout(cursor, 'userId', user.id)).toEqual(['user.updated']);
  });

  it('of an article emits no article.updated and keeps updated_at; a translation alone is a change', async () => {
    const article = await selfservice.article({ published: 1, published_at: 1600000000 });
    await Article.update({ updated_at: OLD }, { where: { id: article.id }, hooks: false });
    let cursor = await lastEvent();
    const same = expectSuccess(await api.put(`/api/selfservice/article/${article.id}`, { title: article.title, published: 1, published_at: 1600000000 }), 'Successfully updated the article!');
    expect(same).toMatchObject({ title: article.title, updated_at: OLD });
    expect(await eventsAbout(cursor, 'articleId', article.id)).toEqual([]);

    cursor = await lastEvent();
    const translated = expectSuccess(await api.put(`/api/selfservice/article/${article.id}`, { 'title:fr': 'Titre' }), 'Successfully updated the article!');
    expect(translated.updated_at).toBeGreaterThanOrEqual(nowSec() - 5);
    expect(await eventsAbout(cursor, 'articleId', article.id)).toEqual(['article.updated']);
  });

  it('of a ticket keeps updated_at and emits no ticket.updated', async () => {
    const { id } = await f.ticket();
    const stored = (await Ticket.findByPk(id))!;
    await Ticket.update({ updated_at: OLD }, { where: { id }, hooks: false });
    const cursor = await lastEvent();
    const same = expectSuccess(await api.put(`/api/ticket/ticket/${id}`, { subject: stored.subject, status: stored.status_id, priority: stored.priority_id }), 'Successfully updated the ticket!');
    expect(same).toMatchObject({ subject: stored.subject, updated_at: OLD });
    expect(await eventsAbout(cursor, 'ticketId', id)).toEqual([]);
  });
});
