/**
 * The event feed: every change appends an event in its transaction (organisations, users,
 * operators, articles, mails), `GET /api/core/event` replays them by cursor, and a reader never
 * skips an event whose transaction was still open when it read.
 */
import './feedEnv';
import { Op } from 'sequelize';
import { DomainEvent, Group } from '../../src/db/models';
import { transaction } from '../../src/db/transaction';
import { emit } from '../../src/events';
import { mailSpec } from '../../src/wiring';
import { closeTransports } from '../../src/mail/transports';
import { createWorker } from '../../src/queue/runWorker';
import { newEmail, unique, useApi } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { startSmtp, waitFor, waitForProgress, type TestSmtp } from '../helpers/smtp';
import { factories } from '../selfservice/support';
import { leftOpen } from '../helpers/races';

const api = useApi();
const f = factories(api);

const latestId = async () => (await DomainEvent.max<number, DomainEvent>('id')) ?? 0;

/**
 * Waits until the feed after `cursor` reaches every event written so far: a recent event that
 * follows a gap in ids is held back for the settle time (1 s here), and any rolled-back or retried
 * transaction of an earlier test may have left a gap.
 */
async function fedAfter(cursor: number): Promise<void> {
  const newest = await latestId();
  await waitFor(async () => {
    let at = cursor;
    for (let page = await feed({ cursor: at, limit: 1000 }); ; page = await feed({ cursor: at, limit: 1000 })) {
      at = page.next_cursor;
      if (!page.has_more) return at >= newest;
    }
  }, 5000, 'the feed to reach the newest event');
}

/** The feed after `cursor`, of these types. */
async function feed(query: Record<string, unknown>) {
  return expectSuccess(await api.get('/api/core/event', query)) as { events: Array<{ id: number; type: string; created_at: number; data: any }>; next_cursor: number; has_more: boolean };
}

describe('events of changes', () => {
  it('are appended for organisations, users, operators and articles, with ids only', async () => {
    const cursor = await latestId();
    const org = expectSuccess(await api.post('/api/user/organisation', { name: unique('Org ') }), 'Successfully created new organisation!');
    expectSuccess(await api.put(`/api/user/organisation/${org.id}`, { notes: 'Key account' }), 'Successfully updated the organisation!');
    expectDeleted(await api.del(`/api/user/organisation/${org.id}`), 'organisation');
    const user = expectSuccess(await api.post('/api/user/user', { email: newEmail() }), 'Successfully created new user!');
    expectDeleted(await api.del(`/api/user/user/${user.id}`), 'user');
    const group = (await Group.findOne({ where: { type: 'operator' } }))!;
    const operator = expectSuccess(await api.post('/api/user/operator', { firstname: 'Ada', lastname: 'Byron', email: newEmail('op'), groups: [group.id] }), 'Successfully created new operator!');
    expectDeleted(await api.del(`/api/user/operator/${operator.id}`), 'operator');
    const article = await f.article();
    expectSuccess(await api.put(`/api/selfservice/article/${article.id}`, { title: unique('Renamed') }), 'Successfully updated the article!');
    expectDeleted(await api.del(`/api/selfservice/article/${article.id}`), 'article');

    await fedAfter(cursor);
    const { events } = await feed({ cursor, limit: 1000 });
    const mine = events.filter((e) => !e.type.startsWith('mail.'));
    expect(mine.map((e) => [e.type, e.data])).toEqual([
      ['organisation.created', { organisationId: org.id }],
      ['organisation.updated', { organisationId: org.id }],
      ['organisation.deleted', { organisationId: org.id }],
      ['user.created', { userId: user.id, sendEmail: false }],
      ['user.deleted', { userId: user.id }],
      ['operator.created', { userId: operator.id, sendEmail: false }],
      ['operator.deleted', { userId: operator.id }],
      ['article.created', { articleId: article.id }],
      ['article.updated', { articleId: article.id }],
      ['article.deleted', { articleId: article.id }],
    ]);
    for (let i = 1; i < events.length; i++) expect(events[i].id).toBeGreaterThan(events[i - 1].id);
  });

  it('are not written when the change fails', async () => {
    const cursor = await latestId();
    expectError(await api.post('/api/user/organisation', { name: unique('Org '), brand_id: 4294967295 }), 422, 'The selected brand id is invalid.');
    expect((await feed({ cursor })).events).toEqual([]);
  });
});

describe('GET /api/core/event', () => {
  it('pages by cursor (exclusive) with next_cursor and has_more, and filters by type', async () => {
    const cursor = await latestId();
    const orgs = [];
    for (let i = 0; i < 3; i++) orgs.push(expectSuccess(await api.post('/api/user/organisation', { name: unique('Org ') }), 'Successfully created new organisation!'));
    await fedAfter(cursor);
    const first = await feed({ cursor, limit: 2, type: 'organisation.created' });
    expect(first.events.map((e) => e.data.organisationId)).toEqual([orgs[0].id, orgs[1].id]);
    expect(first.has_more).toBe(true);
    expect(first.next_cursor).toBe(first.events[1].id);
    const second = await feed({ cursor: first.next_cursor, limit: 2, type: 'organisation.created' });
    expect(second.events.map((e) => e.data.organisationId)).toEqual([orgs[2].id]);
    expect(second).toMatchObject({ has_more: false, next_cursor: second.events[0].id });
    // Nothing new: the cursor stays where it is.
    expect(await feed({ cursor: second.next_cursor, type: 'organisation.created' })).toEqual({ events: [], next_cursor: second.next_cursor, has_more: false });
    // Several types, comma-separated; a type that is not one is refused.
    expect((await feed({ cursor, type: 'user.created,organisation.created' })).events).toHaveLength(3);
    expect((await feed({ cursor, type: 'user.created' })).events).toHaveLength(0);
    expectError(await api.get('/api/core/event', { type: 'organisation.exploded' }), 422, 'The selected type is invalid.');
    expectError(await api.get('/api/core/event', { cursor: -1 }), 422, 'The cursor must be at least 0.');
    // A cursor past the newest event was never handed out: it would skip every event until the ids reach it.
    const newest = await latestId();
    expect(await feed({ cursor: newest, type: 'user.created' })).toEqual({ events: [], next_cursor: newest, has_more: false });
    for (const cursor of [newest + 1, 99999999]) {
      expectError(await api.get('/api/core/event', { cursor }), 422, 'The selected cursor is invalid.');
      expectError(await api.get('/api/core/event', { cursor, type: 'user.created' }), 422, 'The selected cursor is invalid.');
    }
    // An empty parameter is one not given, as in the lists.
    expect((await feed({ cursor: '', type: '', limit: '' })).events.length).toBeGreaterThan(0);
    // limit is clamped like a list's.
    expect((await feed({ cursor: 0, limit: 1e9 })).events.length).toBeLessThanOrEqual(1000);
  });

  it('shows one event, 404 for an unknown one, 405 for other methods', async () => {
    const cursor = await latestId();
    const org = expectSuccess(await api.post('/api/user/organisation', { name: unique('Org ') }), 'Successfully created new organisation!');
    await fedAfter(cursor);
    const [event] = (await feed({ cursor })).events;
    expect(expectSuccess(await api.get(`/api/core/event/${event.id}`))).toEqual({ id: event.id, type: 'organisation.created', created_at: event.created_at, data: { organisationId: org.id } });
    expectNotFound(await api.get('/api/core/event/4294967295'), 'event');
    expectNotFound(await api.get('/api/core/event/nope'), 'event');
    const post = await api.post('/api/core/event', {});
    expectError(post, 405, 'The POST method is not supported here. Supported methods: GET.');
    expect(post.headers.allow).toBe('GET');
  });

  it('never passes an event whose transaction is still open, and passes a rolled-back id once it is old', async () => {
    // An event of its own first: the ids after it are contiguous even if an earlier test left a gap after the last one.
    await transaction((t) => emit(t, 'organisation.created', { organisationId: 0 }));
    const cursor = await latestId();
    const open = await leftOpen((t) => emit(t, 'organisation.created', { organisationId: 1 }));
    await transaction((t) => emit(t, 'organisation.updated', { organisationId: 2 }));
    // The committed event follows the open transaction's id: it waits.
    expect(await feed({ cursor })).toEqual({ events: [], next_cursor: cursor, has_more: false });
    await open.commit();
    expect((await feed({ cursor })).events.map((e) => [e.id, e.type])).toEqual([[cursor + 1, 'organisation.created'], [cursor + 2, 'organisation.updated']]);

    // A rolled-back insert leaves a gap for good: the reader waits the settle time, then passes it.
    await expect(transaction(async (t) => {
      await emit(t, 'organisation.created', { organisationId: 3 });
      throw new Error('rolled back');
    })).rejects.toThrow('rolled back');
    await transaction((t) => emit(t, 'organisation.updated', { organisationId: 4 }));
    const after = cursor + 2;
    expect((await feed({ cursor: after })).events).toEqual([]);
    const passed = await waitFor(async () => {
      const { events } = await feed({ cursor: after });
      return events.length ? events : null;
    }, 5000, 'the gap to settle');
    expect(passed.map((e) => [e.id, e.data])).toEqual([[after + 2, { organisationId: 4 }]]);
  });

  it('never passes an event of a transaction open longer than the settle time, whatever the age of the events after it', async () => {
    await transaction((t) => emit(t, 'organisation.created', { organisationId: 0 }));
    const cursor = await latestId();
    // A long transaction (a user's delete with thousands of tickets): its event is written, its commit is far off.
    const open = await leftOpen((t) => emit(t, 'organisation.created', { organisationId: 1 }));
    await transaction(async (t) => {
      await emit(t, 'organisation.created', { organisationId: 2 });
      await emit(t, 'organisation.updated', { organisationId: 2 });
    });
    // The events after the open one are made an hour old: by their age alone the gap is a rolled-back insert.
    await DomainEvent.update({ created_at: Math.floor(Date.now() / 1000) - 3600 }, { where: { id: [cursor + 2, cursor + 3] } });
    try {
      expect(await feed({ cursor })).toEqual({ events: [], next_cursor: cursor, has_more: false });
      expect(await feed({ cursor, type: 'organisation.created' })).toEqual({ events: [], next_cursor: cursor, has_more: false });
      // A reader of other types is not held back by it.
      expect((await feed({ cursor, type: 'organisation.updated' })).events.map((e) => e.id)).toEqual([cursor + 3]);
    } finally {
      await open.commit();
    }
    expect((await feed({ cursor })).events.map((e) => [e.id, e.type])).toEqual([
      [cursor + 1, 'organisation.created'], [cursor + 2, 'organisation.created'], [cursor + 3, 'organisation.updated'],
    ]);
  });
});

describe('a reader following the feed while writers commit out of id order', () => {
  it('sees every event once: the gap check and the page read one snapshot', async () => {
    await transaction((t) => emit(t, 'organisation.created', { organisationId: 0 }));
    const start = await latestId();
    let writing = true;
    // Writers whose transactions take ids in one order and commit in another.
    const writer = async (w: number) => {
      for (let i = 0; i < 150; i++) {
        await transaction(async (t) => {
          await emit(t, 'organisation.updated', { organisationId: w * 1000 + i });
          if ((i + w) % 2 === 0) await new Promise((r) => setImmediate(r));
        });
      }
    };
    const seen: number[] = [];
    let cursor = start;
    const reader = async () => {
      while (writing) {
        const page = await feed({ cursor, limit: 1000 });
        seen.push(...page.events.map((e) => e.id));
        cursor = page.next_cursor;
      }
    };
    const done = Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(writer)).then(() => { writing = false; });
    await Promise.all([done, reader()]);
    // The writers are done: whatever the reader has not read yet comes once the last gap settles.
    const all = (await DomainEvent.findAll({ attributes: ['id'], where: { id: { [Op.gt]: start } }, order: [['id', 'ASC']] })).map((e) => e.id);
    await waitForProgress(async () => {
      const page = await feed({ cursor, limit: 1000 });
      seen.push(...page.events.map((e) => e.id));
      cursor = page.next_cursor;
      return seen.length;
    }, () => cursor >= all[all.length - 1], 'the reader to catch up', 5000);
    expect(seen).toEqual(all);
  });
});

describe('mail delivery status', () => {
  let smtp: TestSmtp;
  let worker: Awaited<ReturnType<typeof createWorker>>;
  beforeAll(async () => {
    smtp = await startSmtp();
    worker = await createWorker(mailSpec());
  });
  afterAll(async () => {
    await worker.close();
    closeTransports();
    await smtp.close();
  });

  /**
   * The events of one mail after `cursor`. Mails of earlier tests may be delivered or fail for
   * good meanwhile (only this mail's events are ours to count), and the feed holds back a recent
   * event that follows a gap (a retried transaction of the mail worker leaves one) for the settle
   * time (1 s here): wait for it.
   */
  const eventsOf = (cursor: number, type: string, outboxId: number) => waitFor(async () => {
    const ours = (await feed({ cursor, type, limit: 1000 })).events.filter((e) => e.data.outboxId === outboxId);
    return ours.length ? ours : null;
  }, 10000, `the ${type} event`);

  async function mailToNewUser(smtpPort: number) {
    const brand = expectSuccess(await api.post('/api/core/brand', { name: unique('Brand '), default_email: 'desk@brand.test', smtp_host: '127.0.0.1', smtp_port: smtpPort }), 'Successfully created new brand!');
    const email = newEmail('mail');
    const user = expectSuccess(await api.post('/api/user/user', { email, brand_id: brand.id, send_email: 1 }), 'Successfully created new user!');
    const [mail] = expectList(await api.get('/api/core/mail', { type: 'user.verification', order_direction: 'desc', limit: 1 }));
    expect(mail.payload).toEqual({ userId: user.id });
    return { email, mail };
  }

  it('shows a mail sent, with the SMTP answer, and its mail.delivered event', async () => {
    const cursor = await latestId();
    const { email, mail } = await mailToNewUser(smtp.port);
    const sent = await waitFor(async () => {
      const m = expectSuccess(await api.get(`/api/core/mail/${mail.id}`));
      return m.status === 'sent' ? m : null;
    }, 30000, 'the mail to be sent');
    expect(smtp.mailsTo(email)).toHaveLength(1);
    expect(sent).toMatchObject({
      id: mail.id, type: 'user.verification', recipients: email, subject: expect.stringMatching(/^Verify your email address/),
      smtp_response: expect.stringMatching(/^250 /), error: null, attempts: 1, failed_at: null,
    });
    expect(sent.message_id).toMatch(/^<.+>$/);
    expect(sent.sent_at).toBeGreaterThanOrEqual(sent.queued_at);
    // Newest first: the suite's database holds more than a page of other files' mails.
    expect(expectList(await api.get('/api/core/mail', { status: 'sent', order_direction: 'desc', limit: 1000 })).map((m) => m.id)).toContain(mail.id);
    expect(expectList(await api.get('/api/core/mail', { status: 'queued', order_direction: 'desc', limit: 1000 })).map((m) => m.id)).not.toContain(mail.id);
    expect((await eventsOf(cursor, 'mail.delivered', mail.id)).map((e) => e.data)).toEqual([{ outboxId: mail.id }]);
  });

  it('shows a mail that failed for good, with the reason, and its mail.failed event', async () => {
    const cursor = await latestId();
    const { mail } = await mailToNewUser(9); // nothing listens on port 9
    // Three attempts with backoff: bounded by their progress (status, attempts), not by a guess.
    const failed = await waitForProgress(async () => expectSuccess(await api.get(`/api/core/mail/${mail.id}`)),
      (m) => m.status === 'failed', 'the mail to fail', 60000); // a retry waits out its backoff first
    expect(failed).toMatchObject({ attempts: 3, error: expect.stringMatching(/ECONNREFUSED|connect/i), sent_at: null });
    expect(failed.failed_at).toBeGreaterThanOrEqual(failed.queued_at);
    expect(expectList(await api.get('/api/core/mail', { status: 'failed', order_direction: 'desc', limit: 1000 })).map((m) => m.id)).toContain(mail.id);
    expect((await eventsOf(cursor, 'mail.failed', mail.id)).map((e) => e.data)).toEqual([{ outboxId: mail.id }]);
    expectNotFound(await api.get('/api/core/mail/4294967295'), 'mail');
    expectError(await api.get('/api/core/mail', { status: 'lost' }), 422, 'The selected status is invalid.');
  });
});
