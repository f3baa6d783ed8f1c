/**
 * OAuth2 (XOAUTH2/OAUTHBEARER) for department mailboxes and brand SMTP, against real parts: a
 * token server (oauth2-mock-server, strict about clients, refresh tokens and expiry:
 * test/helpers/oauthServer.ts), dovecot validating every token with it through its oauth2 passdb,
 * and an SMTP server (smtp-server) taking only XOAUTH2 and validating tokens the same way.
 * The settings go in through the API as an administrator would send them.
 */
import './mailboxEnv';
import { rmSync, writeFileSync } from 'node:fs';
import { ImapFlow } from 'imapflow';
import { decryptSecret } from '../../src/crypto/secrets';
import { Brand, DepartmentEmail, IncomingMail } from '../../src/db/models';
import { closeTransports, transportFor } from '../../src/mail/transports';
import { pollMailbox } from '../../src/mailbox/poll';
import { resetTlsOptions } from '../../src/mailbox/pollSummary';
import { secretPurpose } from '../../src/oauth/settings';
import { accessToken } from '../../src/oauth/tokens';
import { startDovecot, type Dovecot } from '../helpers/dovecot';
import { newEmail, nowSec, unique, useApi } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';
import { startTokenServer, type TokenServer } from '../helpers/oauthServer';
import { startSmtp, waitFor, type TestSmtp } from '../helpers/smtp';
import { mailWorld, type MailWorld } from '../notifications/support';
import { createWorker } from '../../src/queue/runWorker';
import { mailSpec } from '../../src/wiring';
import { rawMail } from './support';
import { dropQueuedMail } from '../helpers/jobs';

afterAll(() => dropQueuedMail());
const api = useApi();
const tag = unique('oa').toLowerCase();
const user = (name: string) => `${name}@${tag}.test`;
const USERS = ['imap', 'pop', 'broken', 'sender'];

let tokens: TokenServer;
let dovecot: Dovecot;
let smtp: TestSmtp;
let world: MailWorld;

/** What the token server's userinfo answers for a token: the address it belongs to, if valid. */
async function tokenOwner(token: string): Promise<string | null> {
  const res = await fetch(tokens.userinfoUrl, { headers: { Authorization: `Bearer ${token}` } });
  return res.status === 200 ? ((await res.json()) as { email: string }).email : null;
}

beforeAll(async () => {
  tokens = await startTokenServer();
  // The mailbox users' passwords are for the helper's own sessions only (APPEND, listing).
  dovecot = await startDovecot(USERS.map((u) => ({ user: user(u), password: `pw-${unique()}` })), { oauth2: { introspectionUrl: tokens.userinfoUrl } });
  writeFileSync(process.env.MAILBOX_TLS_CA_FILE!, dovecot.cert);
  resetTlsOptions();
  smtp = await startSmtp({ xoauth2: { validate: async (name, token) => (await tokenOwner(token)) === name } });
  world = await mailWorld(smtp.port);
});

afterAll(async () => {
  closeTransports();
  await dovecot?.stop();
  await smtp?.close();
  await tokens?.stop();
  rmSync(process.env.MAILBOX_TLS_CA_FILE!, { force: true });
});

/** The OAuth2 fields of an account at the test token server. */
const oauthSettings = (refreshToken: string) => ({
  auth_type: 'oauth2', oauth_provider: 'custom', oauth_token_url: tokens.tokenUrl,
  oauth_client_id: tokens.clientId, oauth_client_secret: tokens.clientSecret, oauth_refresh_token: refreshToken,
});

const emailPath = () => `/api/ticket/department/${world.department.id}/email`;

async function oauthMailbox(name: string, protocol: 'imap' | 'pop3'): Promise<{ id: number; refreshToken: string }> {
  const refreshToken = tokens.grant(user(name));
  const created = expectSuccess(await api.post(emailPath(), {
    address: user(name), type: 1, protocol, server: '127.0.0.1', port: protocol === 'imap' ? dovecot.ports.imap : dovecot.ports.pop3,
    encryption: 'none', username: user(name), ...oauthSettings(refreshToken),
  }), 'Successfully created new department email!');
  return { id: created.id, refreshToken };
}

const shown = async (id: number) => expectSuccess(await api.get(`${emailPath()}/${id}`), null);
const stored = async (id: number) => (await DepartmentEmail.findByPk(id))!;
const imported = async (id: number) => (await IncomingMail.findAll({ where: { department_email_id: id } })).map((l) => l.decision);

/** An IMAP login with an access token, as the worker makes it: 'ok' or why dovecot refused. */
async function imapLogin(name: string, accessToken: string): Promise<string> {
  const c = new ImapFlow({ host: '127.0.0.1', port: dovecot.ports.imap, secure: false, doSTARTTLS: false, auth: { user: user(name), accessToken }, logger: false });
  c.on('error', () => {});
  try {
    await c.connect();
    await c.logout();
    return 'ok';
  } catch (err) {
    return (err as { authenticationFailed?: boolean }).authenticationFailed ? 'refused' : `failed: ${(err as Error).message}`;
  }
}

describe('the OAuth2 settings over the API', () => {
  it('refuses incomplete or unsafe settings with a 422 and stores nothing', async () => {
    const before = await DepartmentEmail.count();
    const base = { address: user(`bad-${unique()}`), type: 1, protocol: 'imap', server: '127.0.0.1', encryption: 'none', username: 'x@y.test' };
    expectError(await api.post(emailPath(), { ...base, auth_type: 'oauth2' }), 422, 'The oauth provider field is required when auth type is oauth2.');
    expectError(await api.post(emailPath(), { ...base, auth_type: 'oauth2', oauth_provider: 'google', oauth_refresh_token: 'r' }), 422,
      'The oauth client id field is required when auth type is oauth2.');
    expectError(await api.post(emailPath(), { ...base, auth_type: 'oauth2', oauth_provider: 'google', oauth_client_id: 'c' }), 422,
      'The oauth refresh token field is required when auth type is oauth2.');
    expectError(await api.post(emailPath(), { ...base, auth_type: 'oauth2', oauth_provider: 'microsoft', oauth_client_id: 'c', oauth_refresh_token: 'r' }), 422,
      'The oauth tenant field is required when oauth provider is microsoft.');
    expectError(await api.post(emailPath(), { ...base, auth_type: 'oauth2', oauth_provider: 'custom', oauth_client_id: 'c', oauth_refresh_token: 'r' }), 422,
      'The oauth token url field is required when oauth provider is custom.');
    expectError(await api.post(emailPath(), { ...base, ...oauthSettings('r'), oauth_token_url: 'http://10.1.2.3/token' }), 422,
      /^The oauth token url is not allowed: 10\.1\.2\.3 is a private address; list it in OUTBOUND_ALLOW_HOSTS/);
    expectError(await api.post(emailPath(), { ...base, ...oauthSettings('r'), oauth_token_url: 'http://169.254.169.254/token' }), 422,
      /^The oauth token url is not allowed: 169\.254\.169\.254 is a cloud metadata/);
    expectError(await api.post(emailPath(), { ...base, ...oauthSettings('r'), oauth_provider: 'yahoo' }), 422, /oauth provider/);
    expectError(await api.post(emailPath(), { ...base, ...oauthSettings('r'), auth_type: 'kerberos' }), 422, /auth type/);
    expectError(await api.post(emailPath(), { ...base, ...oauthSettings('r'), oauth_provider: 'microsoft', oauth_tenant: '../evil' }), 422, /oauth tenant/);
    // A password login still needs its password.
    expectError(await api.post(emailPath(), base), 422, 'The password field is required when type is 1.');
    expect(await DepartmentEmail.count()).toBe(before);

    expectError(await api.put(`/api/core/brand/${world.brand.id}`, { ...oauthSettings('r') }), 422, 'The smtp username field is required when auth type is oauth2.');
    expect((await Brand.findByPk(world.brand.id))!.auth_type).toBe('password');
  });

  it('builds the token endpoint of the Microsoft 365 and Google presets, masks the secrets and stores them encrypted', async () => {
    const ms = expectSuccess(await api.post(emailPath(), {
      address: user(`ms-${unique()}`), type: 0, username: 'desk@contoso.test', auth_type: 'oauth2', oauth_provider: 'microsoft',
      oauth_tenant: 'contoso.onmicrosoft.com', oauth_client_id: 'app-id', oauth_client_secret: 'the-secret', oauth_refresh_token: 'the-refresh-token',
    }), 'Successfully created new department email!');
    expect(ms).toMatchObject({
      auth_type: 'oauth2', oauth_provider: 'microsoft', oauth_tenant: 'contoso.onmicrosoft.com', oauth_client_id: 'app-id',
      oauth_token_url: 'https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token',
      oauth_client_secret: '********', oauth_refresh_token: '********',
      oauth_state: { expires_at: null, last_refreshed_at: null, last_error: null, last_error_at: null },
    });
    const row = await stored(ms.id);
    for (const [column, plain] of [['oauth_client_secret', 'the-secret'], ['oauth_refresh_token', 'the-refresh-token']] as const) {
      expect(row[column]).toMatch(/^v1:[0-9a-f]{8}:/);
      expect(row[column]).not.toContain(plain);
      expect(decryptSecret(row[column]!, secretPurpose('department_emails', column))).toBe(plain);
    }
    // The mask sent back keeps the secrets.
    expectSuccess(await api.put(`${emailPath()}/${ms.id}`, { oauth_client_id: 'app-id', oauth_client_secret: '********', oauth_refresh_token: '********' }), 'Successfully updated the department email!');
    expect(decryptSecret((await stored(ms.id)).oauth_refresh_token!, secretPurpose('department_emails', 'oauth_refresh_token'))).toBe('the-refresh-token');
    // Another token endpoint (provider, tenant, URL) is not sent the stored secrets: it takes them again.
    const endpointChange = 'the oauth token url changes: the stored';
    for (const change of [{ oauth_provider: 'google' }, { oauth_tenant: 'fabrikam.onmicrosoft.com' }, { oauth_provider: 'google', oauth_client_secret: '********', oauth_refresh_token: '********' }]) {
      expectError(await api.put(`${emailPath()}/${ms.id}`, change), 422, `The oauth client secret field is required when ${endpointChange} oauth client secret is not sent to another server.`);
    }
    expectError(await api.put(`${emailPath()}/${ms.id}`, { oauth_provider: 'google', oauth_client_secret: 'new-secret' }), 422,
      `The oauth refresh token field is required when ${endpointChange} oauth refresh token is not sent to another server.`);
    // A URL the preset would ignore is refused, not stored unused.
    expectError(await api.put(`${emailPath()}/${ms.id}`, { oauth_token_url: 'https://example.com/token' }), 422, 'The oauth token url field is taken only when the oauth provider is custom.');
    expect((await stored(ms.id)).oauth_provider).toBe('microsoft');
    const google = expectSuccess(await api.put(`${emailPath()}/${ms.id}`, { oauth_provider: 'google', oauth_client_secret: 'new-secret', oauth_refresh_token: 'new-refresh-token' }), 'Successfully updated the department email!');
    expect(google).toMatchObject({ oauth_provider: 'google', oauth_token_url: 'https://oauth2.googleapis.com/token', oauth_refresh_token: '********' });
    expect(decryptSecret((await stored(ms.id)).oauth_refresh_token!, secretPurpose('department_emails', 'oauth_refresh_token'))).toBe('new-refresh-token');
    // Its mail server too: another one takes the refresh token again, whose access tokens it would be sent.
    const remote = expectSuccess(await api.put(`${emailPath()}/${ms.id}`, { type: 1, protocol: 'imap', server: 'imap.contoso.test', oauth_refresh_token: 'rt-2' }), 'Successfully updated the department email!');
    expectError(await api.put(`${emailPath()}/${remote.id}`, { server: 'imap.attacker.test' }), 422,
      'The oauth refresh token field is required when the server changes: the stored oauth refresh token is not sent to another server.');
    expect((await stored(ms.id)).server).toBe('imap.contoso.test');
    // A password mailbox shows no OAuth2 state.
    const plainBox = expectSuccess(await api.post(emailPath(), { address: user(`pw-${unique()}`), type: 0 }), 'Successfully created new department email!');
    expect(plainBox).toMatchObject({ auth_type: 'password', oauth_state: null, oauth_refresh_token: null });
  });
});

/** The IMAP mailbox of the tests below (the last one polls it again). */
let box: { id: number; refreshToken: string };

describe('an IMAP mailbox with OAuth2', () => {
  it('refreshes a token, logs in with it (dovecot validates it), imports, and stores the rotated refresh token encrypted', async () => {
    box = await oauthMailbox('imap', 'imap');
    await dovecot.append(user('imap'), await rawMail({ from: newEmail('cust'), to: user('imap') }));
    const granted = tokens.refreshes.granted;
    expect(await pollMailbox(box.id)).toMatchObject({ fetched: 1 });
    expect(await imported(box.id)).toEqual(['new_ticket']);
    expect(tokens.refreshes.granted).toBe(granted + 1);

    // The provider rotated the refresh token: the old one is dead there, the new one is stored, encrypted.
    expect(tokens.refreshTokenValid(box.refreshToken)).toBe(false);
    const row = await stored(box.id);
    expect(row.oauth_refresh_token).not.toContain('rt-');
    const current = decryptSecret(row.oauth_refresh_token!, secretPurpose('department_emails', 'oauth_refresh_token'));
    expect(tokens.refreshTokenValid(current)).toBe(true);
    const accessToken = decryptSecret(row.oauth_access_token!, secretPurpose('department_emails', 'oauth_access_token'));
    expect(accessToken).toBe(tokens.issued[tokens.issued.length - 1].token);
    expect(row.oauth_access_token).not.toContain(accessToken.slice(0, 20));

    const view = await shown(box.id);
    expect(view.oauth_state.expires_at).toBeGreaterThanOrEqual(nowSec() + 3500);
    expect(view.oauth_state.last_refreshed_at).toBeGreaterThanOrEqual(nowSec() - 60);
    expect(view.oauth_state.last_error).toBeNull();
    expect(view).toMatchObject({ oauth_refresh_token: '********', oauth_client_secret: '********', oauth_token_url: tokens.tokenUrl, last_error: null });
    expect(JSON.stringify(view)).not.toContain(current);
    expect(JSON.stringify(view)).not.toContain(accessToken);
  });

  it('uses the stored token while it is valid (also after a client PUTs back what it read), and refreshes it before it expires', async () => {
    const { id, created_at, updated_at, department_id, last_polled_at, last_error, last_error_at, oauth_state, ...readBack } = await shown(box.id);
    expectSuccess(await api.put(`${emailPath()}/${box.id}`, readBack), 'Successfully updated the department email!');
    expect((await shown(box.id)).oauth_state).toEqual(oauth_state);
    const granted = tokens.refreshes.granted;
    await dovecot.append(user('imap'), await rawMail({ from: newEmail('cust'), to: user('imap') }));
    expect(await pollMailbox(box.id)).toMatchObject({ fetched: 1 });
    expect(tokens.refreshes.granted).toBe(granted);

    // Within OAUTH_REFRESH_BEFORE_SECONDS (300) of the expiry of a token of an hour: renewed before the login.
    await DepartmentEmail.update({ oauth_expires_at: nowSec() + 200, oauth_last_refreshed_at: nowSec() - 3400 }, { where: { id: box.id } });
    const old = tokens.issued[tokens.issued.length - 1].token;
    await dovecot.append(user('imap'), await rawMail({ from: newEmail('cust'), to: user('imap') }));
    expect(await pollMailbox(box.id)).toMatchObject({ fetched: 1 });
    expect(tokens.refreshes.granted).toBe(granted + 1);
    const now = decryptSecret((await stored(box.id)).oauth_access_token!, secretPurpose('department_emails', 'oauth_access_token'));
    expect(now).not.toBe(old);
    expect((await shown(box.id)).oauth_state.expires_at).toBeGreaterThanOrEqual(nowSec() + 3500);
  });

  it('two workers needing a new token at once refresh once: the second waits for the lock and takes the first one\'s token', async () => {
    await DepartmentEmail.update({ oauth_expires_at: nowSec() + 10, oauth_last_refreshed_at: nowSec() - 3590 }, { where: { id: box.id } });
    const { granted, asked } = tokens.refreshes;
    const account = { table: 'department_emails' as const, id: box.id, use: 'imap' as const };
    const [a, b] = await Promise.all([accessToken(account), accessToken(account)]);
    expect(a.token).toBe(b.token);
    expect(tokens.refreshes).toEqual({ granted: granted + 1, asked: asked + 1 });
    expect(await imapLogin('imap', a.token)).toBe('ok');
  });

  it('after dovecot refuses a revoked token, refreshes and polls with the new one', async () => {
    const row = await stored(box.id);
    const revoked = decryptSecret(row.oauth_access_token!, secretPurpose('department_emails', 'oauth_access_token'));
    expect(await imapLogin('imap', revoked)).toBe('ok');
    tokens.revoke(revoked);
    // Dovecot asks the token server, which no longer knows the token; a made-up one fares no better.
    expect(await imapLogin('imap', revoked)).toBe('refused');
    expect(await imapLogin('imap', 'not-a-token')).toBe('refused');

    const granted = tokens.refreshes.granted;
    await dovecot.append(user('imap'), await rawMail({ from: newEmail('cust'), to: user('imap') }));
    expect(await pollMailbox(box.id)).toMatchObject({ fetched: 1 });
    expect(tokens.refreshes.granted).toBe(granted + 1);
    expect(await imported(box.id)).toEqual(['new_ticket', 'new_ticket', 'new_ticket', 'new_ticket']);
    const fresh = decryptSecret((await stored(box.id)).oauth_access_token!, secretPurpose('department_emails', 'oauth_access_token'));
    expect(fresh).not.toBe(revoked);
    expect(await imapLogin('imap', fresh)).toBe('ok');
  });

  it('a refresh token the provider refuses fails the poll, and both states say why', async () => {
    const bad = await oauthMailbox('broken', 'imap');
    expectSuccess(await api.put(`${emailPath()}/${bad.id}`, { oauth_refresh_token: 'rt-never-issued' }), 'Successfully updated the department email!');
    const result = await pollMailbox(bad.id);
    expect(result).toMatchObject({ error: expect.stringContaining('invalid_grant') });
    const view = await shown(bad.id);
    expect(view.oauth_state.last_error).toMatch(/^The token endpoint refused the refresh \(400, invalid_grant: /);
    expect(view.oauth_state.last_error_at).toBeGreaterThanOrEqual(nowSec() - 60);
    expect(view.oauth_state.expires_at).toBeNull();
    expect(view.last_error).toBe(view.oauth_state.last_error);
    expect(view.poll_failures).toBe(1);
    expect(view.last_error).not.toContain('rt-never-issued');

    // The token endpoint is checked again at every refresh (src/net): a metadata address is never asked.
    await DepartmentEmail.update({ oauth_token_url: 'http://169.254.169.254/token', oauth_provider: 'custom' }, { where: { id: bad.id } });
    const asked = tokens.refreshes.asked;
    expect(await pollMailbox(bad.id)).toMatchObject({ error: expect.stringMatching(/^The token endpoint is not allowed: 169\.254\.169\.254 is a cloud metadata/) });
    expect(tokens.refreshes.asked).toBe(asked);
    await DepartmentEmail.update({ oauth_token_url: tokens.tokenUrl }, { where: { id: bad.id } });

    // A new refresh token through the API clears the state and the backoff, and the next poll works.
    const fixed = expectSuccess(await api.put(`${emailPath()}/${bad.id}`, { oauth_refresh_token: tokens.grant(user('broken')) }), 'Successfully updated the department email!');
    expect(fixed).toMatchObject({ poll_failures: 0, next_poll_at: null, oauth_state: { last_error: null, expires_at: null } });
    expect(await pollMailbox(bad.id)).toMatchObject({ fetched: 0 });
    expect((await shown(bad.id)).oauth_state.last_error).toBeNull();
  });
});

describe('a POP3 mailbox with OAuth2 (AUTH XOAUTH2)', () => {
  it('logs in with a refreshed token, and after a refused one refreshes and logs in again', async () => {
    const box = await oauthMailbox('pop', 'pop3');
    await dovecot.append(user('pop'), await rawMail({ from: newEmail('cust'), to: user('pop') }));
    expect(await pollMailbox(box.id)).toMatchObject({ fetched: 1 });
    expect(await imported(box.id)).toEqual(['new_ticket']);

    const revoked = decryptSecret((await stored(box.id)).oauth_access_token!, secretPurpose('department_emails', 'oauth_access_token'));
    tokens.revoke(revoked);
    const granted = tokens.refreshes.granted;
    await dovecot.append(user('pop'), await rawMail({ from: newEmail('cust'), to: user('pop') }));
    expect(await pollMailbox(box.id)).toMatchObject({ fetched: 1 });
    expect(tokens.refreshes.granted).toBe(granted + 1);
    expect(await imported(box.id)).toEqual(['new_ticket', 'new_ticket']);
  });
});

describe('a brand sending by SMTP with XOAUTH2', () => {
  it('sends through a server that takes only XOAUTH2, and after a refused token refreshes and sends again', async () => {
    const refreshToken = tokens.grant(user('sender'));
    const updated = expectSuccess(await api.put(`/api/core/brand/${world.brand.id}`, {
      smtp_requires_auth: 1, smtp_username: user('sender'), ...oauthSettings(refreshToken),
    }), 'Successfully updated the brand!');
    expect(updated).toMatchObject({ auth_type: 'oauth2', oauth_refresh_token: '********', oauth_client_secret: '********', oauth_state: { expires_at: null } });
    const brandRow = () => Brand.findByPk(world.brand.id).then((b) => b!);
    expect((await brandRow()).oauth_refresh_token).toMatch(/^v1:/);
    // Another SMTP server would be sent the access tokens: it takes the refresh token again.
    for (const change of [{ smtp_host: 'smtp.attacker.test' }, { smtp_port: 2525 }, { smtp_encryption: 'ssl' }]) {
      expectError(await api.put(`/api/core/brand/${world.brand.id}`, change), 422,
        `The oauth refresh token field is required when the ${Object.keys(change)[0].replace(/_/g, ' ')} changes: the stored oauth refresh token is not sent to another server.`);
    }
    expect((await brandRow()).smtp_host).toBe(world.brand.smtp_host);

    const send = async (to: string) => transportFor(await brandRow()).sendMail({ from: user('sender'), to, subject: `Hello ${to}`, text: 'Hello' });
    const first = newEmail('rcpt');
    await send(first);
    await waitFor(() => smtp.mailsTo(first).length === 1, 10000, 'the first mail at the SMTP server');
    const afterFirst = await brandRow();
    const rotated = decryptSecret(afterFirst.oauth_refresh_token!, secretPurpose('brands', 'oauth_refresh_token'));
    expect(rotated).not.toBe(refreshToken);
    expect(tokens.refreshTokenValid(rotated)).toBe(true);
    const view = expectSuccess(await api.get(`/api/core/brand/${world.brand.id}`));
    expect(view.oauth_state.expires_at).toBeGreaterThanOrEqual(nowSec() + 3500);
    expect(view.oauth_state.last_error).toBeNull();

    // A new connection (the pool closed) presents the stored token, which the provider has revoked:
    // the server answers 334 with its error, nodemailer asks for a new token, the service refreshes.
    closeTransports();
    tokens.revoke(decryptSecret(afterFirst.oauth_access_token!, secretPurpose('brands', 'oauth_access_token')));
    const granted = tokens.refreshes.granted;
    const second = newEmail('rcpt');
    await send(second);
    await waitFor(() => smtp.mailsTo(second).length === 1, 10000, 'the second mail at the SMTP server');
    expect(tokens.refreshes.granted).toBe(granted + 1);
    expect(smtp.received.filter((m) => m.envelopeFrom === user('sender'))).toHaveLength(2);
  });
});

describe('a brand whose refresh token the provider refuses', () => {
  it('fails the send with the provider\'s reason, shown in the brand\'s oauth_state; nothing reaches the server', async () => {
    const created = expectSuccess(await api.post('/api/core/brand', {
      name: `Broken ${tag}`, smtp_host: '127.0.0.1', smtp_port: smtp.port, smtp_username: user('sender'), ...oauthSettings('rt-revoked-consent'),
    }), 'Successfully created new brand!');
    const to = newEmail('never');
    const brand = (await Brand.findByPk(created.id))!;
    await expect(transportFor(brand).sendMail({ from: user('sender'), to, subject: 'Hi', text: 'Hi' })).rejects.toThrow(/invalid_grant/);
    const view = expectSuccess(await api.get(`/api/core/brand/${created.id}`));
    expect(view.oauth_state).toMatchObject({ expires_at: null, last_error: expect.stringMatching(/^The token endpoint refused the refresh \(400, invalid_grant: /) });
    expect(view.oauth_state.last_error).not.toContain('rt-revoked-consent');
    expect(smtp.mailsTo(to)).toHaveLength(0);
  });
});

describe('both ways at once', () => {
  it('a mail fetched with OAuth2 is acknowledged by the mail worker through SMTP with XOAUTH2', async () => {
    const mailer = await createWorker(mailSpec());
    try {
      const customer = newEmail('both');
      await dovecot.append(user('imap'), await rawMail({ from: customer, to: user('imap'), subject: 'Where is my parcel?' }));
      expect(await pollMailbox(box.id)).toMatchObject({ fetched: 1 });
      const ack = await waitFor(() => smtp.mailsTo(customer)[0], 60000, 'the acknowledgement at the SMTP server');
      expect(ack.parsed.headers.get('auto-submitted')).toBe('auto-replied');
      expect(ack.parsed.subject).toContain('Where is my parcel?');
      expect(smtp.mailsTo(customer)).toHaveLength(1);
    } finally {
      await mailer.close();
    }
  });
});
