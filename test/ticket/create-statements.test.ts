/**
 * The cost of opening a ticket (issue 18): POST /api/ticket/ticket with its first message runs at
 * most 12 statements, whatever it writes (the ticket, its number, the message, the audit row, the
 * event, the notifications' outbox entries). The definitions it consults (custom fields, webhooks)
 * are kept per process (db/definitions.ts) and read again after any change of them.
 */
import { definitions } from '../../src/db/definitions';
import { Brand, Setting, Webhook, WebhookDelivery } from '../../src/db/models';
import { countQueries, sequelize } from '../../src/db/sequelize';
import { select } from '../../src/db/select';
import { configCacheSettled } from '../../src/ticket/configCache';
import { newEmail, unique, useApi } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';
import { freshCaches, listQueries, transactionWaves } from '../helpers/queries';
import { redisCommandsDuring } from '../helpers/redisMonitor';
import { ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);

beforeAll(async () => {
  ctx = await ticketContext();
});

async function measureCreate(extra: Record<string, unknown>) {
  const { result, queries } = await countQueries(() => api.post('/api/ticket/ticket', f.body(extra)));
  return { data: expectSuccess(result, 'Successfully created new ticket!'), queries: listQueries(queries) };
}

describe('opening a ticket', () => {
  it('runs at most 12 statements, warm, for a known user', async () => {
    // A random number is written with the ticket; a %S format costs an UPDATE more (the id first).
    // Other files of the worker may change the global format: this department names its own.
    const department = await f.department({ ticket_number_format: '%N{7}' });
    const user = await f.user();
    const measure = () => measureCreate({ user: user.id, department: department.id });
    await measure();
    // What the warm-up missed was read in its transaction and is being kept by a read outside it.
    await Promise.all([definitions.settled(), configCacheSettled()]);
    // A configuration cache entry lives 10 s from its load (db/versionedCache.ts), so on a loaded
    // machine one may expire between two creates and cost one read: the warm cost is the least of
    // three creates in a row, and none costs more than that read more.
    const runs = [await measure(), await measure(), await measure()];
    for (const { data } of runs) expect(data.number).toMatch(/^\d+$/);
    const counts = runs.map((r) => r.queries.length);
    // 8 (START, the configuration in one SELECT, the user, the ticket, the message, the audit row,
    // the event, COMMIT: the answer is presented from what was written). The custom fields and the
    // webhooks come from the process's definitions. A failure shows the statements (11 once, in a
    // full run: the deliveries of an enabled webhook that another file of the jest worker had left).
    const least = runs.map((r) => r.queries).sort((a, b) => a.length - b.length)[0];
    expect(least).toHaveLength(8);
    expect(Math.max(...counts)).toBeLessThanOrEqual(Math.min(...counts) + 1);
    for (const { queries } of runs) expect(queries.filter((q) => /FROM `?(custom_fields|webhooks)`?/.test(q))).toEqual([]);
  });
});

describe('adding a message', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const reply = (ticketId: number, userId: number, extra: Record<string, unknown> = {}) => api.post('/api/ticket/message', {
    ticket_id: ticketId, user_id: userId, text: 'Any news?', send_user_email: 0, send_operators_email: 0, ...extra,
  });

  it('answers with its author and no attachments as the write knew them, reading nothing after COMMIT', async () => {
    const ticket = await f.ticket();
    await reply(ticket.id, ticket.user_id);
    await Promise.all([definitions.settled(), configCacheSettled()]);
    const { result, queries } = await countQueries(() => reply(ticket.id, ticket.user_id));
    const data = expectSuccess(result, 'Successfully created new message!');
    // Sequelize logs `Executing (<connection>): <sql>`.
    const counted = listQueries(queries).map((q) => q.replace(/^Executing \([^)]*\): /, ''));
    const commit = counted.indexOf('COMMIT;');
    expect(commit).toBeGreaterThan(0);
    // The author and the (no) attachments were read back after COMMIT before: two statements.
    expect(counted.slice(commit + 1)).toEqual([]);
    // What it answers is what a show of the message reads.
    const shown = expectSuccess(await api.get(`/api/ticket/message/${data.id}`));
    expect(data).toEqual(shown);
    expect(data.user).toMatchObject({ id: ticket.user_id, email: expect.any(String) });
    expect(data.attachments).toEqual([]);
  });

  it('holds the ticket\'s lock for four round trips: the author is read with it, the UPDATE sent with its audit entry', async () => {
    // A user's reply to a ticket in another status than the open one: it moves the status, so
    // the ticket is updated and audited.
    const ticket = await f.ticket({ status: ctx.otherStatus });
    await reply(ticket.id, ticket.user_id);
    expect((await api.put(`/api/ticket/ticket/${ticket.id}`, { status: ctx.otherStatus })).status).toBe(200);
    await Promise.all([definitions.settled(), configCacheSettled()]);
    const { result, waves } = await transactionWaves(() => reply(ticket.id, ticket.user_id));
    expectSuccess(result, 'Successfully created new message!');
    expect(waves.map((w) => w.length)).toEqual([1, 2, 1, 2, 1, 1]);
    expect(waves[0][0]).toMatch(/^START TRANSACTION/);
    expect(waves[1][0]).toMatch(/^SELECT .* FROM tickets .*FOR UPDATE$/s);
    expect(waves[1][1]).toMatch(/^SELECT .* FROM users .*LOCK IN SHARE MODE$/s);
    expect(waves.slice(2).map((w) => w.map((sql) => /^(INSERT INTO \w+|UPDATE \w+|COMMIT)/.exec(sql)?.[1]))).toEqual([
      ['INSERT INTO ticket_messages'], ['UPDATE tickets', 'INSERT INTO ticket_audits'], ['INSERT INTO events'], ['COMMIT'],
    ]);
    // What the pipelined statements wrote: the status moved, with its audit entry and the event.
    const shown = expectSuccess(await api.get(`/api/ticket/ticket/${ticket.id}`));
    expect(shown.status_id).toBe(ctx.openStatus);
    const [audit] = await select<{ changes: string }>('SELECT changes FROM ticket_audits WHERE ticket_id = ? AND action = ? ORDER BY id DESC LIMIT 1', [ticket.id, 'replied']);
    expect(JSON.parse(audit.changes).status_id).toEqual({ before: ctx.otherStatus, after: ctx.openStatus });
  });

  it('with attachments, answers with them read back, as a show does', async () => {
    const ticket = await f.ticket();
    const data = expectSuccess(await reply(ticket.id, ticket.user_id, { attachment: [{ filename: 'log.txt', contents: b64('boom') }] }), 'Successfully created new message!');
    expect(data.attachments).toEqual([expect.objectContaining({ message_id: data.id, original_name: 'log.txt' })]);
    expect(data).toEqual(expectSuccess(await api.get(`/api/ticket/message/${data.id}`)));
  });
});

describe('the Redis round trips of a write', () => {
  // Each cache version is read once per request, with the rate-limit counts (db/versionedCache.ts
  // VersionSnapshot): a create consulted the definitions and the configuration four times, a
  // user's create the definitions five times, each a GET of its own.
  const versionReads = (sent: string[]) => sent.filter((line) => /-version"/.test(line));

  it('opening a ticket, replying to it and creating a user each read the versions in the one command that starts the request', async () => {
    const user = await f.user();
    const department = await f.department();
    const open = () => api.post('/api/ticket/ticket', f.body({ user: user.id, department: department.id, send_user_email: 0, send_operators_email: 0 }));
    const ticket = expectSuccess(await open(), 'Successfully created new ticket!');
    const reply = () => api.post('/api/ticket/message', { ticket_id: ticket.id, user_id: user.id, text: 'Any news?', send_user_email: 0, send_operators_email: 0 });
    const createUser = () => api.post('/api/user/user', { firstname: 'Ada', lastname: 'Lovelace', email: newEmail('rtt') });
    expectSuccess(await reply(), 'Successfully created new message!');
    for (const [write, message] of [[open, 'Successfully created new ticket!'], [reply, 'Successfully created new message!'], [createUser, 'Successfully created new user!']] as const) {
      const { result, sent } = await redisCommandsDuring(write);
      expectSuccess(result, message);
      expect(versionReads(sent)).toHaveLength(1);
      expect(versionReads(sent)[0]).toMatch(/^"evalsha" /);
    }
  });
});

describe('the definitions a create consults, kept per process', () => {
  it('a custom field made required is required of the very next create, and its removal frees it', async () => {
    const user = await f.user();
    // A department of its own: the field binds no other test's tickets.
    const department = await f.department();
    const open = (customfield?: Record<number, string>) => api.post('/api/ticket/ticket', f.body({ user: user.id, department: department.id, customfield }));
    expectSuccess(await open(), 'Successfully created new ticket!');
    const field = expectSuccess(await api.post('/api/ticket/customfield', { name: unique('Order'), type: 8, required: 1, depts: [department.id] }), 'Successfully created new custom field!');
    try {
      expectError(await open(), 422, `The customfield.${field.id} field is required.`);
      expectSuccess(await open({ [field.id]: 'A-1' }), 'Successfully created new ticket!');
    } finally {
      expect((await api.del(`/api/ticket/customfield/${field.id}`)).status).toBe(200);
    }
    expectSuccess(await open(), 'Successfully created new ticket!');
    expectError(await open({ [field.id]: 'A-2' }), 422, `The selected customfield.${field.id} is invalid.`);
  });

  it('a webhook added is delivered the very next event, and one disabled is not', async () => {
    await f.ticket();
    const hook = await Webhook.create({ url: `https://example.com/${unique('h')}`, events: JSON.stringify(['ticket.created']), enabled: 1, secret: 'x'.repeat(32) } as any);
    try {
      const first = await f.ticket();
      const deliveries = async () => (await WebhookDelivery.findAll({ where: { webhook_id: hook.id } })).map((d) => d.event_name);
      expect(await deliveries()).toEqual(['ticket.created']);
      await hook.update({ enabled: 0 });
      await f.ticket();
      expect(await deliveries()).toEqual(['ticket.created']);
      expect(first.id).toBeGreaterThan(0);
    } finally {
      await WebhookDelivery.destroy({ where: { webhook_id: hook.id } });
      await hook.destroy();
    }
  });

  it('a brand added is taken by the very next user create, and a core setting changed applies to it', async () => {
    const createUser = (extra: Record<string, unknown> = {}) => api.post('/api/user/user', { firstname: 'Ada', lastname: 'Lovelace', email: newEmail('def'), ...extra });
    expectSuccess(await createUser(), 'Successfully created new user!');
    const brand = await Brand.create({ name: unique('brand') });
    expect(expectSuccess(await createUser({ brand_id: brand.id }), 'Successfully created new user!').brand_id).toBe(brand.id);
    const timezone = (await Setting.findOne({ where: { scope: 'core', name: 'default_timezone' } }))!;
    const before = timezone.value;
    await timezone.update({ value: before === 'Asia/Tokyo' ? 'Europe/Paris' : 'Asia/Tokyo' });
    try {
      expect(expectSuccess(await createUser(), 'Successfully created new user!').timezone).toBe(timezone.value);
    } finally {
      await timezone.update({ value: before });
    }
  });

  it('a miss inside a transaction reads its snapshot, and keeps only the committed state', async () => {
    await freshCaches();
    const key = unique('defs');
    const read = (t?: any) => select<{ n: number }>('SELECT COUNT(*) AS n FROM webhooks WHERE enabled = 1', [], { transaction: t }).then((r) => Number(r[0].n));
    const t = await sequelize().transaction();
    let hook: Webhook | undefined;
    try {
      const before = await read(t); // the transaction's snapshot starts here
      hook = await Webhook.create({ url: `https://example.com/${unique('h')}`, events: JSON.stringify(['*']), enabled: 0, secret: 'x'.repeat(32) } as any);
      await sequelize().query('UPDATE webhooks SET enabled = 1 WHERE id = ?', { replacements: [hook.id] });
      await freshCaches();
      expect(await definitions.get(key, read, t)).toBe(before);
      // The read of the committed state, started by the miss, is what is kept.
      let outside = await definitions.get(key, read);
      expect(outside).toBe(before + 1);
      outside = await definitions.get(key, async () => -1);
      expect(outside).toBe(before + 1);
    } finally {
      await t.rollback();
      await hook?.destroy();
    }
  });
});
