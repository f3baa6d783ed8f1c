/**
 * The mail catcher: its real SMTP server receives what the mail worker sends for a ticket created
 * through the API, and the web process shows it over the API and on /admin/mail. It keeps the
 * newest MAIL_CATCHER_KEEP mails. The seeded brand sends to it, at APP_URL (PORT).
 */
import nodemailer from 'nodemailer';
import request from 'supertest';
import { config, loadConfig } from '../../src/config';
import { Brand, CaughtMail, Ticket } from '../../src/db/models';
import { defaultBrand, stalePortWarnings } from '../../src/seed/seed';
import { mailSpec } from '../../src/wiring';
import { closeTransports } from '../../src/mail/transports';
import { startMailCatcher, type MailCatcher } from '../../src/mailcatcher/server';
import { createWorker } from '../../src/queue/runWorker';
import { newEmail, unique, useApi } from '../helpers/app';
import { waitFor } from '../helpers/smtp';
import { mailWorld, settled, type MailWorld } from '../notifications/support';

const api = useApi();
let catcher: MailCatcher;
let world: MailWorld;
let worker: Awaited<ReturnType<typeof createWorker>>;

beforeAll(async () => {
  catcher = await startMailCatcher({ host: '127.0.0.1', port: 0, keep: 200 });
  world = await mailWorld(catcher.port);
  worker = await createWorker(mailSpec());
});
afterAll(async () => {
  await worker.close();
  closeTransports();
  await catcher.close();
});

const caughtTo = async (address: string) => {
  const res = await api.get('/api/core/mailcatcher', { order_column: 'created_at', order_direction: 'desc', limit: 100 });
  expect(res.status).toBe(200);
  return (res.body.data as any[]).filter((m) => m.to.includes(address));
};

describe('a ticket created through the API', () => {
  it('is caught by the mail catcher and shown over the API and on /admin/mail', async () => {
    const email = newEmail('caught');
    const created = await api.post('/api/ticket/ticket', {
      brand: world.brand.id, department: world.department.id, status: Number(world.openStatus), priority: world.priorityId,
      subject: 'Printer <script>alert(1)</script> jammed', text: 'It <b>stopped</b>.', user_email: email, user_firstname: 'Ada',
    });
    expect([created.status, created.body.status]).toEqual([200, 'success']);
    const ticket = (await Ticket.findByPk(created.body.data.id))!;

    const [listed] = await waitFor(async () => {
      const found = await caughtTo(email);
      return found.length ? found : null;
    }, 30000, 'the ticket\'s mail in the mail catcher');
    expect(listed).toMatchObject({
      to: [email], from: expect.stringContaining('@'), subject: `[#${ticket.number}]: Printer <script>alert(1)</script> jammed`,
      size: expect.any(Number), created_at: expect.any(Number),
    });

    const shown = await api.get(`/api/core/mailcatcher/${listed.id}`);
    expect(shown.status).toBe(200);
    // The message's text is rich text: HTML in the HTML part, read as text in the text part.
    expect(shown.body.data.text).toContain('It stopped.');
    expect(shown.body.data.html).toContain('It <b>stopped</b>.');
    expect(shown.body.data.headers).toMatch(/^Subject: /mi);

    const page = await request(api.app).get('/admin/mail').auth(api.token, 'x');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.text).toContain(`href="/admin/mail/${listed.id}"`);
    expect(page.text).toContain('Printer &lt;script&gt;alert(1)&lt;/script&gt; jammed');
    expect(page.text).not.toContain('<script>');

    const one = await request(api.app).get(`/admin/mail/${listed.id}`).auth(api.token, 'x');
    expect(one.status).toBe(200);
    // The mail's HTML goes into a sandboxed frame, escaped as an attribute: none of it is this page's markup.
    expect(one.text).toMatch(/<iframe sandbox="" srcdoc="[^"<>]*It &lt;b&gt;stopped/);
    expect(one.text).not.toContain('<script>');
    await settled(ticket.id); // the operators' mails too, before the store's test below counts rows
  });
});

describe('the API and the page', () => {
  it('need a token', async () => {
    expect((await request(api.app).get('/admin/mail')).status).toBe(401);
    expect((await request(api.app).get('/api/core/mailcatcher')).status).toBe(401);
  });

  it('answer 404 for an unknown mail', async () => {
    const res = await api.get('/api/core/mailcatcher/999999999');
    expect([res.status, res.body.message]).toEqual([404, 'The caught mail with given ID was not found.']);
    expect((await request(api.app).get('/admin/mail/999999999').auth(api.token, 'x')).status).toBe(404);
    expect((await request(api.app).get('/admin/mail/abc').auth(api.token, 'x')).status).toBe(404);
  });
});

describe('the store', () => {
  it('keeps the newest mails only', async () => {
    const small = await startMailCatcher({ host: '127.0.0.1', port: 0, keep: 2 });
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: small.port, secure: false, ignoreTLS: true });
    try {
      const to = newEmail('kept');
      for (const n of [1, 2, 3]) {
        const info = await transport.sendMail({ from: 'a@example.com', to, subject: `${unique('keep')} ${n}`, text: `mail ${n}` });
        expect(info.response).toMatch(/^250 .*Caught as mail \d+/);
      }
      const rows = await CaughtMail.findAll({ order: [['id', 'ASC']] });
      expect(rows.map((r) => r.text?.trim())).toEqual(['mail 2', 'mail 3']);
    } finally {
      transport.close();
      await small.close();
    }
  });
});

describe('the seeded brand', () => {
  it('sends to the mail catcher at APP_URL, which follows PORT', async () => {
    const seeded = (await Brand.findByPk(1))!;
    const expected = defaultBrand(config());
    expect(seeded).toMatchObject({ system_url: expected.system_url, smtp_host: expected.smtp_host, smtp_port: expected.smtp_port });
    expect(defaultBrand(loadConfig({ PORT: '4321' }))).toMatchObject({ system_url: 'http://127.0.0.1:4321', smtp_host: '127.0.0.1', smtp_port: 1025 });
    expect(defaultBrand(loadConfig({ PORT: '4321', APP_URL: 'https://help.example.com/' })).system_url).toBe('https://help.example.com');
    expect(defaultBrand(loadConfig({ MAIL_CATCHER_PORT: '2626', MAIL_CATCHER_HOST: '0.0.0.0' }))).toMatchObject({ smtp_host: '127.0.0.1', smtp_port: 2626 });
    // No catcher (production, or MAIL_CATCHER=0): port 25 of this machine, as before.
    expect(defaultBrand(loadConfig({ NODE_ENV: 'production' }))).toMatchObject({ smtp_port: 25 });
    expect(defaultBrand(loadConfig({ MAIL_CATCHER: '0' }))).toMatchObject({ smtp_port: 25 });
  });

  it('is named by npm start when it points at ports of this machine no longer in use (the catcher or the server moved)', async () => {
    const seeded = (await Brand.findByPk(1))!;
    const ofSeeded = async (cfg: ReturnType<typeof config>) => (await stalePortWarnings(cfg)).filter((w) => w.startsWith('Brand 1 '));
    expect(await ofSeeded(config())).toEqual([]);
    expect(await ofSeeded(loadConfig({ MAIL_CATCHER_PORT: '2626', PORT: '4321' }))).toEqual([
      `Brand 1 (${seeded.name}) sends its mail to 127.0.0.1:${seeded.smtp_port}, but the mail catcher listens on port 2626 now: if that was the catcher's port, `
        + `set the brand's (PUT /api/core/brand/1 smtp_port=2626) or start with MAIL_CATCHER_PORT=${seeded.smtp_port}.`,
      `Brand 1 (${seeded.name}) links to ${seeded.system_url} (its system_url), but this server is at http://127.0.0.1:4321 now: `
        + 'set it (PUT /api/core/brand/1 system_url=http://127.0.0.1:4321) if it was this server\'s address.',
    ]);
    // No catcher: a brand's SMTP server is the administrator's. The same ports: nothing to say.
    expect(await ofSeeded(loadConfig({ MAIL_CATCHER: '0', APP_URL: seeded.system_url! }))).toEqual([]);
    expect(await ofSeeded(loadConfig({ MAIL_CATCHER_PORT: String(seeded.smtp_port), APP_URL: seeded.system_url! }))).toEqual([]);
  });
});
