import request from 'supertest';
import {
  Channel, EmailTemplate, FeedbackField, FeedbackForm, Setting, Ticket, TicketPriority, TicketStatus,
} from '../../src/db/models';
import { seed } from '../../src/seed/seed';
import { channelByName } from '../../src/ticket/channelByName';
import { useApi } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';

const api = useApi();

const TICKET_SETTINGS = [
  'allowed_files', 'default_open_status', 'default_resolved_status', 'inactive_close_time', 'ticket_notes_position',
  'ticket_number_format', 'ticket_reply_order',
  // Beyond the spec's list, as SupportPal has it: the reminder of tickets waiting on their user.
  'waiting_response_time',
];
const CHANNEL_SETTINGS = ['unauthenticated_users', 'show_captcha', 'show_related_articles'];

describe('GET /api/ticket/settings', () => {
  it('returns every key of the spec, every value a string', async () => {
    const data = expectSuccess(await api.get('/api/ticket/settings'));
    expect(Object.keys(data).sort()).toEqual([...TICKET_SETTINGS].sort());
    for (const key of TICKET_SETTINGS) expect(typeof data[key]).toBe('string');
  });

  it('names the seeded Open and Resolved statuses and ships SupportPal defaults', async () => {
    const data = expectSuccess(await api.get('/api/ticket/settings'));
    const open = (await TicketStatus.findOne({ where: { name: 'Open' } }))!;
    const resolved = (await TicketStatus.findOne({ where: { name: 'Resolved' } }))!;
    expect(data).toMatchObject({
      default_open_status: String(open.id), default_resolved_status: String(resolved.id), inactive_close_time: '604800',
      waiting_response_time: '345600', ticket_number_format: '%N{7}', ticket_notes_position: '0', ticket_reply_order: '0',
    });
    const extensions = data.allowed_files.split('|');
    expect(extensions).toEqual(expect.arrayContaining(['jpg', 'jpeg', 'png', 'gif', 'pdf', 'txt', 'doc', 'docx', 'zip']));
    for (const ext of extensions) expect(ext).toMatch(/^[a-z0-9]+$/);
  });

  it('is read-only: 405 with Allow: GET', async () => {
    const res = await request(api.app).put('/api/ticket/settings').auth(api.token, 'x');
    expect(res.headers.allow).toBe('GET');
    expectError(res, 405, 'The PUT method is not supported here. Supported methods: GET.');
  });
});

describe('channels', () => {
  it('web, email and api ship with the install', async () => {
    const channels = await Channel.findAll({ order: [['id', 'ASC']] });
    expect(channels.map((c) => [c.name, c.enabled, c.class])).toEqual([['Web', 1, 'WebChannel'], ['Email', 1, 'EmailChannel'], ['API', 1, 'ApiChannel']]);
  });

  it('are found by name whatever its case', async () => {
    for (const name of ['web', 'Web', 'WEB', ' email ', 'api']) expect(await channelByName(name)).not.toBeNull();
    expect(await channelByName('fax')).toBeNull();
    expect(await channelByName('')).toBeNull();
  });
});

describe('GET /api/ticket/channel/{channel}/settings', () => {
  it.each(['web', 'Web', 'EMAIL', 'api', 'API'])('returns the channel settings of %s', async (name) => {
    const data = expectSuccess(await api.get(`/api/ticket/channel/${name}/settings`));
    expect(Object.keys(data).sort()).toEqual([...CHANNEL_SETTINGS].sort());
    for (const key of CHANNEL_SETTINGS) expect(data[key]).toMatch(/^[01]$/);
  });

  it('differs per channel', async () => {
    expect(expectSuccess(await api.get('/api/ticket/channel/web/settings'))).toEqual({ unauthenticated_users: '1', show_captcha: '1', show_related_articles: '1' });
    expect(expectSuccess(await api.get('/api/ticket/channel/email/settings'))).toEqual({ unauthenticated_users: '1', show_captcha: '0', show_related_articles: '0' });
  });

  it('404 in the envelope for an unknown channel', async () => {
    expectError(await api.get('/api/ticket/channel/fax/settings'), 404, 'The channel with given name was not found.');
    expectError(await api.get(`/api/ticket/channel/${'x'.repeat(100)}/settings`), 404, 'The channel with given name was not found.');
  });

  it('is read-only', async () => {
    const res = await request(api.app).post('/api/ticket/channel/web/settings').auth(api.token, 'x');
    expectError(res, 405, 'The POST method is not supported here. Supported methods: GET.');
  });

  it('needs a token', async () => {
    expect((await request(api.app).get('/api/ticket/channel/web/settings')).status).toBe(401);
  });
});

describe('the seed', () => {
  it('runs again without adding or changing anything, and never brings back what was deleted', async () => {
    const inProgress = (await TicketStatus.findOne({ where: { name: 'In Progress' } }))!;
    const urgent = (await TicketPriority.findOne({ where: { name: 'Urgent' } }))!;
    // Tickets of other test files (same database) may use them: they move to Open and Low first.
    const open = (await TicketStatus.findOne({ where: { name: 'Open' } }))!;
    const lowest = (await TicketPriority.findOne({ where: { name: 'Low' } }))!;
    await Ticket.update({ status_id: open.id }, { where: { status_id: inProgress.id } });
    await Ticket.update({ priority_id: lowest.id }, { where: { priority_id: urgent.id } });
    await inProgress.destroy();
    await urgent.destroy();
    const low = (await TicketPriority.findOne({ where: { name: 'Low' } }))!;
    await low.update({ colour: '#123123' });
    const counts = async () => Promise.all([
      TicketStatus.count(), TicketPriority.count(), Channel.count(), Setting.count(), EmailTemplate.count(), FeedbackForm.count(), FeedbackField.count(),
    ]);
    const before = await counts();
    try {
      await seed();
      expect(await counts()).toEqual(before);
      expect(await TicketStatus.count({ where: { name: 'In Progress' } })).toBe(0);
      expect((await TicketPriority.findByPk(low.id))!.colour).toBe('#123123');
    } finally {
      // Other test files of this worker expect the defaults.
      await TicketStatus.create(inProgress.get({ plain: true }));
      await TicketPriority.create(urgent.get({ plain: true }));
      await low.update({ colour: '#3498db' });
    }
  });
});
