import request from 'supertest';
import { config } from '../../src/config';
import { EmailTemplate, OutboxEntry, User, UserToken } from '../../src/db/models';
import { mailSpec } from '../../src/wiring';
import { createWorker } from '../../src/queue/runWorker';
import { verifyPassword } from '../../src/user/passwords';
import { closeTransports } from '../../src/mail/transports';
import { useApi, unique } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { mailQueue } from '../helpers/jobs';
import { startSmtp, waitFor, type TestSmtp } from '../helpers/smtp';

const api = useApi();
let smtp: TestSmtp;
let worker: Awaited<ReturnType<typeof createWorker>>;
let brandId: number;

async function brandOn(port: number, extra: Record<string, unknown> = {}) {
  const res = await api.post('/api/core/brand', {
    name: unique('Brand '), default_email: 'help@brand.test', smtp_host: '127.0.0.1', smtp_port: port,
    global_email_header: '<p>BRAND-HEADER</p>', global_email_footer: '<p>BRAND-FOOTER <a href="https://brand.test/unsub">Unsubscribe</a></p>', ...extra,
  });
  expect(res.status).toBe(200);
  return res.body.data.id as number;
}

const linkIn = (text: string) => /\/account\/verify\/([A-Za-z0-9_-]+)/.exec(text)?.[1];

beforeAll(async () => {
  smtp = await startSmtp();
  brandId = await brandOn(smtp.port);
  worker = await createWorker(mailSpec());
});

afterAll(async () => {
  await worker.close();
  closeTransports();
  await smtp.close();
});

describe('verification mail', () => {
  it('is delivered through the brand SMTP server with the brand header, footer and a single-use link', async () => {
    const email = `${unique('v')}@example.com`;
    const res = await api.post('/api/user/user', { email, firstname: 'Vera', lastname: 'Fication', brand_id: brandId, send_email: 1 });
    expect(res.status).toBe(200);
    const mail = await waitFor(() => smtp.mailsTo(email)[0], 15000, 'the verification mail');

    expect(mail.envelopeFrom).toBe('help@brand.test');
    expect(mail.parsed.from?.value[0].address).toBe('help@brand.test');
    expect(mail.parsed.subject).toMatch(/Verify your email address/);
    expect(mail.parsed.headers.get('auto-submitted')).toBe('auto-generated');
    const text = mail.parsed.text ?? '';
    expect(text).toContain('BRAND-HEADER');
    // The footer's link keeps its address in the text part.
    expect(text).toContain('BRAND-FOOTER Unsubscribe (https://brand.test/unsub)');
    expect(text.indexOf('BRAND-HEADER')).toBeLessThan(text.indexOf('Hello Vera Fication'));
    expect(mail.parsed.html).toContain('<p>BRAND-FOOTER <a href="https://brand.test/unsub">Unsubscribe</a></p>');
    const token = linkIn(text);
    expect(token).toBeDefined();
    expect(text).toContain(`${config().appUrl}/account/verify/${token}`);

    // The token is stored only as a hash.
    const stored = await UserToken.findOne({ where: { user_id: res.body.data.id } });
    expect(stored!.token_hash).not.toContain(token);

    const check = await request(api.app).get(`/account/verify/${token}`);
    expect(check.status).toBe(200);
    expect(check.body.data.email).toBe(email);

    const set = await request(api.app).post(`/account/verify/${token}`).type('form').send({ password: 'a-new-password-1' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ status: 'success', message: 'Your email address is verified and your password is set.' });
    const user = await User.findByPk(res.body.data.id);
    expect(user!.email_verified).toBe(1);
    expect(await verifyPassword(user!.password!, 'a-new-password-1')).toBe(true);

    // Single use.
    const again = await request(api.app).post(`/account/verify/${token}`).type('form').send({ password: 'another-password-2' });
    expect(again.status).toBe(404);
    expect(again.body.status).toBe('error');
    expect((await request(api.app).get(`/account/verify/${token}`)).status).toBe(404);
  });

  it('is the email template, in the person\'s language: the brand\'s own version, translated, is what reaches the SMTP server', async () => {
    const brand = await brandOn(smtp.port, { name: unique('Markt ') });
    // A brand's own version (the API edits templates, the install ships them); its German translation through the API.
    const own = await EmailTemplate.create({
      brand_id: brand, name: 'user_email_verification', subject: 'Welcome to {{ brand.name }}',
      contents: '<p>Hi {{ user.firstname }}: <a href="{{ verification.url }}">choose a password</a> within {{ verification.hours }} hours.</p>',
    });
    expectSuccess(await api.put(`/api/core/emailtemplate/${own.id}`, {
      'subject:de': 'Willkommen bei {{ brand.name }}',
      'contents:de': '<p>Hallo {{ user.firstname }} &amp; willkommen: <a href="{{ verification.url }}">Passwort wählen</a>, {{ verification.hours }} Stunden lang.</p>',
    }), 'Successfully updated the email template!');
    const hours = Math.round(config().verifyTokenTtl / 3600);

    const german = `${unique('de')}@example.com`;
    expectSuccess(await api.post('/api/user/user', { email: german, firstname: 'Grete<b>', brand_id: brand, language_code: 'de', send_email: 1 }), 'Successfully created new user!');
    const english = `${unique('en')}@example.com`;
    expectSuccess(await api.post('/api/user/user', { email: english, firstname: 'Ann', brand_id: brand, language_code: 'fr', send_email: 1 }), 'Successfully created new user!');
    const [de, en] = [
      await waitFor(() => smtp.mailsTo(german)[0], 15000, 'the German verification mail'),
      await waitFor(() => smtp.mailsTo(english)[0], 15000, 'the other verification mail'),
    ];
    const name = (await api.get(`/api/core/brand/${brand}`)).body.data.name;
    expect(de.parsed.subject).toBe(`Willkommen bei ${name}`);
    expect(de.parsed.text).toContain(`Hallo Grete<b> & willkommen: Passwort wählen (${config().appUrl}/account/verify/${linkIn(de.parsed.text ?? '')})`);
    expect(de.parsed.text).toContain(`${hours} Stunden lang.`);
    // In HTML the name is text, never markup; the link is the verification link; the brand frames it.
    expect(de.parsed.html).toContain('Hallo Grete&lt;b&gt; &amp; willkommen');
    expect(de.parsed.html).toContain(`<a href="${config().appUrl}/account/verify/${linkIn(de.parsed.text ?? '')}">Passwort wählen</a>`);
    expect(de.parsed.html).toContain('BRAND-HEADER');
    // No French translation: the brand's version as stored.
    expect(en.parsed.subject).toBe(`Welcome to ${name}`);
    expect(en.parsed.text).toContain(`Hi Ann: choose a password (${config().appUrl}/account/verify/`);
    // Each link works.
    for (const mail of [de, en]) expect((await request(api.app).get(`/account/verify/${linkIn(mail.parsed.text ?? '')}`)).status).toBe(200);
  });

  it('refuses a short password and an expired link', async () => {
    const email = `${unique('x')}@example.com`;
    await api.post('/api/user/user', { email, brand_id: brandId, send_email: 1 });
    const mail = await waitFor(() => smtp.mailsTo(email)[0], 15000, 'the mail');
    const token = linkIn(mail.parsed.text ?? '')!;
    const short = await request(api.app).post(`/account/verify/${token}`).type('form').send({ password: 'short' });
    expect(short.status).toBe(422);
    expect(short.body.message).toBe('The password must be at least 8 characters.');

    const user = await User.findOne({ where: { email } });
    await UserToken.update({ expires_at: 1000 }, { where: { user_id: user!.id } });
    const expired = await request(api.app).post(`/account/verify/${token}`).type('form').send({ password: 'long-enough-1' });
    expect(expired.status).toBe(404);
    expect((await User.findByPk(user!.id))!.password).toBeNull();
  });

  it('is sent on update only while the user has no password', async () => {
    const email = `${unique('u')}@example.com`;
    const created = await api.post('/api/user/user', { email, brand_id: brandId, password: 'has-a-password-1' });
    const upd = await api.put(`/api/user/user/${created.body.data.id}`, { send_email: 1 });
    expect(upd.status).toBe(200);
    expect(await OutboxEntry.count({ where: { payload: JSON.stringify({ userId: created.body.data.id }) } })).toBe(0);

    const email2 = `${unique('u')}@example.com`;
    const c2 = await api.post('/api/user/user', { email: email2, brand_id: brandId });
    await api.put(`/api/user/user/${c2.body.data.id}`, { send_email: 1 });
    await waitFor(() => smtp.mailsTo(email2)[0], 15000, 'the mail after update');
  });

  it('never goes to an inactive user, created or updated with active 0 (as to an inactive operator)', async () => {
    const created = await api.post('/api/user/user', { email: `${unique('in')}@example.com`, brand_id: brandId, send_email: 1, active: 0 });
    expect([created.status, created.body.data.active]).toEqual([200, 0]);
    const active = await api.post('/api/user/user', { email: `${unique('in')}@example.com`, brand_id: brandId });
    const updated = await api.put(`/api/user/user/${active.body.data.id}`, { active: 0, send_email: 1 });
    expect([updated.status, updated.body.data.active]).toEqual([200, 0]);
    for (const id of [created.body.data.id, active.body.data.id]) {
      expect(await OutboxEntry.count({ where: { payload: JSON.stringify({ userId: id }) } })).toBe(0);
      expect(await UserToken.count({ where: { user_id: id } })).toBe(0);
    }
  });

  it('goes to an active operator without a password, under the default brand, and never to an inactive one', async () => {
    const active = `${unique('op')}@example.com`;
    const inactive = `${unique('op')}@example.com`;
    // Operators send under the first enabled brand; point it at the test server for this test.
    const before = (await api.get('/api/core/brand/1')).body.data;
    await api.put('/api/core/brand/1', { smtp_host: '127.0.0.1', smtp_port: smtp.port, smtp_encryption: '' });
    try {
      const a = await api.post('/api/user/operator', { firstname: 'A', lastname: 'Op', email: active, groups: [1], send_email: 1 });
      const b = await api.post('/api/user/operator', { firstname: 'I', lastname: 'Op', email: inactive, groups: [1], send_email: 1, active: 0 });
      expect(a.status).toBe(200);
      expect(b.status).toBe(200);
      await waitFor(() => smtp.mailsTo(active)[0], 15000, 'the operator mail');
      expect(await OutboxEntry.count({ where: { payload: JSON.stringify({ userId: b.body.data.id }) } })).toBe(0);
    } finally {
      await api.put('/api/core/brand/1', { smtp_host: before.smtp_host, smtp_port: before.smtp_port, smtp_encryption: before.smtp_encryption ?? '' });
    }
  });

  it('is sent once even when its job is published twice', async () => {
    const email = `${unique('d')}@example.com`;
    const res = await api.post('/api/user/user', { email, brand_id: brandId, send_email: 1 });
    await waitFor(() => smtp.mailsTo(email)[0], 15000, 'the first mail');
    const entry = await OutboxEntry.findOne({ where: { payload: JSON.stringify({ userId: res.body.data.id }) } });
    await waitFor(async () => (await entry!.reload()).processed_at, 5000, 'the entry to be marked processed');
    // A second job for the same entry (as after a crash between add and mark): skipped by the handler.
    const mail = mailQueue();
    try {
      await mail.queue.add('user.verification', { userId: res.body.data.id, outboxId: entry!.id }, { jobId: `again-${entry!.id}` });
      // Its turn has come and gone, and it sent nothing.
      expect(await mail.finished([`again-${entry!.id}`], 'the second job')).toEqual(['completed']);
    } finally {
      await mail.close();
    }
    expect(smtp.mailsTo(email)).toHaveLength(1);
  });
});
