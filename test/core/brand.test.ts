import request from 'supertest';
import { Brand } from '../../src/db/models';
import { BRAND_SMTP_PASSWORD, MAILBOX_PASSWORD, SecretDecryptError, decryptSecret } from '../../src/crypto/secrets';
import { useApi, unique, nowSec } from '../helpers/app';
import { expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { expectTimestamps } from './support';

const api = useApi();
const BASE = '/api/core/brand';

/** The spec's Brand object, every field, and the OAuth2 extension. */
const BRAND_FIELDS = [
  'id', 'name', 'enabled', 'system_url', 'frontend_logo', 'frontend_template', 'default_email', 'global_email_header',
  'global_email_footer', 'email_method', 'smtp_host', 'smtp_port', 'smtp_encryption', 'smtp_requires_auth', 'smtp_username',
  'smtp_password', 'default_country', 'default_timezone', 'date_format', 'time_format', 'default_language', 'language_toggle',
  'created_at', 'updated_at',
  // The OAuth2 extension (docs/mail.md, OAuth2).
  'auth_type', 'oauth_provider', 'oauth_client_id', 'oauth_client_secret', 'oauth_tenant', 'oauth_token_url', 'oauth_scope', 'oauth_refresh_token', 'oauth_state',
].sort();

async function create(form: Record<string, unknown>): Promise<any> {
  return expectSuccess(await api.post(BASE, form), 'Successfully created new brand!');
}

async function show(id: number): Promise<any> {
  return expectSuccess(await api.get(`${BASE}/${id}`));
}

function expectBrandShape(b: any) {
  expect(Object.keys(b).sort()).toEqual(BRAND_FIELDS);
  expect(Number.isInteger(b.id)).toBe(true);
  expect([0, 1]).toContain(b.enabled);
  expect([0, 1]).toContain(b.smtp_requires_auth);
  expect(b.smtp_port === null || Number.isInteger(b.smtp_port)).toBe(true);
  expect(Number.isInteger(b.language_toggle)).toBe(true);
  expect(Number.isInteger(b.created_at)).toBe(true);
  expect(Number.isInteger(b.updated_at)).toBe(true);
}

describe('GET /api/core/brand/{id}', () => {
  it('shows the seeded default brand with every field of the Brand object', async () => {
    const brand = await show(1);
    expectBrandShape(brand);
    expect(brand).toMatchObject({ id: 1, name: 'Default Brand', enabled: 1, email_method: 'smtp', smtp_port: 1025 }); // the seeded brand sends to the mail catcher (MAIL_CATCHER_PORT)
  });

  it.each(['4294967295', 'abc'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.get(`${BASE}/${id}`), 'brand');
  });
});

describe('GET /api/core/brand', () => {
  it('lists brands with every field of the Brand object', async () => {
    const created = await create({ name: unique('List brand') });
    const data = expectList(await api.get(BASE, { limit: 1000 }));
    expect(data.length).toBeGreaterThanOrEqual(2);
    data.forEach(expectBrandShape);
    expect(data).toContainEqual(created);
  });

  it('filters by enabled', async () => {
    const on = await create({ name: unique('On'), enabled: 1 });
    const off = await create({ name: unique('Off'), enabled: 0 });

    const enabledRes = await api.get(BASE, { enabled: 1, limit: 1000 });
    const enabled = expectList(enabledRes);
    expect(enabled.every((b) => b.enabled === 1)).toBe(true);
    expect(enabled.map((b) => b.id)).toEqual(expect.arrayContaining([1, on.id]));
    expect(enabled.map((b) => b.id)).not.toContain(off.id);
    expect(enabledRes.body.count).toBe(enabled.length);

    const disabled = expectList(await api.get(BASE, { enabled: 0, limit: 1000 }));
    expect(disabled.every((b) => b.enabled === 0)).toBe(true);
    expect(disabled.map((b) => b.id)).toContain(off.id);
    expect(disabled.map((b) => b.id)).not.toContain(on.id);

    const byWord = expectList(await api.get(BASE, { enabled: 'false', limit: 1000 }));
    expect(byWord.map((b) => b.id)).toEqual(disabled.map((b) => b.id));
  });

  it('answers 422 to an enabled filter that is no boolean', async () => {
    expectError(await api.get(BASE, { enabled: 'sometimes' }), 422, 'The enabled field must be true or false.');
  });

  it('sorts by name', async () => {
    const prefix = unique('Sort');
    await create({ name: `${prefix} b` });
    await create({ name: `${prefix} a` });
    const data = expectList(await api.get(BASE, { order_column: 'name', limit: 1000 }));
    const mine = data.map((b) => b.name).filter((n: string) => n.startsWith(prefix));
    expect(mine).toEqual([`${prefix} a`, `${prefix} b`]);
  });
});

describe('POST /api/core/brand', () => {
  it('creates a brand with the defaults', async () => {
    const name = unique('Brand');
    const before = nowSec();
    const brand = await create({ name });
    expectBrandShape(brand);
    expect(brand).toMatchObject({
      name, enabled: 1, email_method: 'smtp', frontend_template: 'default', default_country: 'default',
      default_timezone: 'default', date_format: 'default', time_format: 'default', default_language: 'default',
      smtp_requires_auth: 0, smtp_host: null, smtp_port: null, smtp_encryption: null, smtp_username: null, smtp_password: null,
    });
    expectTimestamps(brand, before);
    expect(await show(brand.id)).toEqual(brand);
  });

  it('stores the SMTP settings', async () => {
    const brand = await create({
      name: unique('Smtp'), smtp_host: 'smtp.example.com', smtp_port: '587', smtp_encryption: 'tls',
      smtp_requires_auth: 'true', smtp_username: 'mailer', smtp_password: 's3cr3t pass',
    });
    expect(brand).toMatchObject({
      smtp_host: 'smtp.example.com', smtp_port: 587, smtp_encryption: 'tls', smtp_requires_auth: 1,
      smtp_username: 'mailer', smtp_password: 's3cr3t pass',
    });
  });

  it('stores the SMTP password encrypted, shows it as sent, and takes it sent again as no change', async () => {
    const brand = await create({ name: unique('Sealed'), smtp_requires_auth: 1, smtp_username: 'mailer', smtp_password: 'p@ss wörd' });
    const stored = (await Brand.findByPk(brand.id))!.smtp_password!;
    expect(stored).toMatch(/^v1:[0-9a-f]{8}:/);
    expect(decryptSecret(stored, BRAND_SMTP_PASSWORD)).toBe('p@ss wörd');
    // Bound to its column: the same ciphertext is no mailbox password.
    expect(() => decryptSecret(stored, MAILBOX_PASSWORD)).toThrow(SecretDecryptError);
    expect(await show(brand.id)).toMatchObject({ smtp_password: 'p@ss wörd' });
    await Brand.sequelize!.query('UPDATE brands SET updated_at = 1000 WHERE id = ?', { replacements: [brand.id] });
    const same = expectSuccess(await api.put(`${BASE}/${brand.id}`, { smtp_password: 'p@ss wörd' }), 'Successfully updated the brand!');
    expect(same.updated_at).toBe(1000);
    expect((await Brand.findByPk(brand.id))!.smtp_password).toBe(stored);
    // A password stored before the column was encrypted reads as it is, and is encrypted at its next write.
    await Brand.update({ smtp_password: 'old plain' }, { where: { id: brand.id } });
    expect(await show(brand.id)).toMatchObject({ smtp_password: 'old plain' });
    expectSuccess(await api.put(`${BASE}/${brand.id}`, { smtp_password: 'new one' }), 'Successfully updated the brand!');
    expect((await Brand.findByPk(brand.id))!.smtp_password).toMatch(/^v1:/);
    expect(await show(brand.id)).toMatchObject({ smtp_password: 'new one' });
  });

  it('accepts smtp_encryption ssl', async () => {
    const brand = await create({ name: unique('Ssl'), smtp_encryption: 'ssl', smtp_port: 465 });
    expect(brand).toMatchObject({ smtp_encryption: 'ssl', smtp_port: 465 });
  });

  it('accepts an empty smtp_encryption (plain SMTP)', async () => {
    const brand = await create({ name: unique('Plain'), smtp_encryption: '' });
    expect(brand.smtp_encryption).toBeNull();
  });

  it('stores the other brand fields', async () => {
    const brand = await create({
      name: unique('Full'), enabled: 0, system_url: 'https://help.example.com', default_email: 'Help@Example.com',
      global_email_header: '<p>Hi</p>', global_email_footer: '<p>Bye</p>', default_country: 'FR', default_timezone: 'Europe/Paris',
      date_format: 'Y-m-d', time_format: 'H:i', default_language: 'fr', language_toggle: 1, frontend_template: 'modern',
    });
    expect(brand).toMatchObject({
      enabled: 0, system_url: 'https://help.example.com', default_email: 'help@example.com', global_email_header: '<p>Hi</p>',
      global_email_footer: '<p>Bye</p>', default_country: 'FR', default_timezone: 'Europe/Paris', date_format: 'Y-m-d',
      time_format: 'H:i', default_language: 'fr', language_toggle: 1, frontend_template: 'modern',
    });
  });

  it('sanitises the global email header and footer as rich text: they frame the HTML of every mail the brand sends', async () => {
    const brand = await create({
      name: unique('Framed'),
      global_email_header: '<a href="javascript:alert(3)">hdr</a><p onclick="x()">Hello</p>',
      global_email_footer: '<b>foot</b><script>alert(1)</script><img src=x onerror=alert(2)>',
    });
    expect(brand.global_email_header).toBe('<a>hdr</a><p>Hello</p>');
    expect(brand.global_email_footer).toBe('<b>foot</b><img src="x" />');
    const updated = expectSuccess(await api.put(`${BASE}/${brand.id}`, { global_email_footer: '<i>Bye</i><iframe src="https://x.test"></iframe>' }), 'Successfully updated the brand!');
    expect(updated.global_email_footer).toBe('<i>Bye</i>');
    expect(expectSuccess(await api.put(`${BASE}/${brand.id}`, { global_email_footer: '' }), 'Successfully updated the brand!').global_email_footer).toBeNull();
  });

  const invalid: Array<[string, (name: string) => Record<string, unknown>, string | RegExp]> = [
    ['no name', () => ({ enabled: 1, smtp_host: 'smtp.example.com' }), 'The name field is required.'],
    ['an empty name', () => ({ name: '' }), 'The name field is required.'],
    ['an smtp_encryption other than ssl or tls', (name) => ({ name, smtp_encryption: 'starttls' }), 'The selected smtp encryption is invalid.'],
    ['an smtp_port above 65535', (name) => ({ name, smtp_port: 70000 }), 'The smtp port may not be greater than 65535.'],
    ['an smtp_port of 0', (name) => ({ name, smtp_port: 0 }), 'The smtp port must be at least 1.'],
    ['an smtp_port that is no integer', (name) => ({ name, smtp_port: 'twenty-five' }), 'The smtp port must be an integer.'],
    ['an smtp_requires_auth that is no boolean', (name) => ({ name, smtp_requires_auth: 'yes' }), 'The smtp requires auth field must be true or false.'],
    ['an smtp_host that is no host name', (name) => ({ name, smtp_host: 'not a host!' }), /^The smtp host /],
    ['an enabled that is no boolean', (name) => ({ name, enabled: 'on' }), 'The enabled field must be true or false.'],
    ['a default_email that is no address', (name) => ({ name, default_email: 'nobody' }), 'The default email must be a valid email address.'],
  ];
  it.each(invalid)('answers 422 to %s and creates nothing', async (_name, body, message) => {
    const name = unique('Invalid');
    // A valid field with a unique value marks the brand, had it been created (even without a name).
    const marker = unique('marker');
    expectError(await api.post(BASE, { smtp_username: marker, ...body(name) }), 422, message);
    const all = expectList(await api.get(BASE, { limit: 1000 }));
    expect(all.filter((b) => b.smtp_username === marker || b.name === name)).toEqual([]);
  });
});

describe('PUT /api/core/brand/{id}', () => {
  it('updates the SMTP settings only: no defaults are applied on update', async () => {
    const brand = await create({ name: unique('Upd'), enabled: 0, smtp_host: 'old.example.com', smtp_port: 25 });
    const res = await api.put(`${BASE}/${brand.id}`, {
      smtp_host: 'mail.example.org', smtp_port: 2525, smtp_encryption: 'ssl', smtp_requires_auth: 1, smtp_username: 'u', smtp_password: 'p',
    });
    const updated = expectSuccess(res, 'Successfully updated the brand!');
    expect(updated).toEqual({
      ...brand, smtp_host: 'mail.example.org', smtp_port: 2525, smtp_encryption: 'ssl', smtp_requires_auth: 1,
      smtp_username: 'u', smtp_password: 'p', updated_at: updated.updated_at,
    });
    expect(updated.enabled).toBe(0);
    expect(await show(brand.id)).toEqual(updated);
  });

  it('clears SMTP fields sent empty', async () => {
    const brand = await create({ name: unique('Clear'), smtp_encryption: 'tls', smtp_username: 'u', smtp_password: 'p' });
    const updated = expectSuccess(
      await api.put(`${BASE}/${brand.id}`, { smtp_encryption: '', smtp_username: '', smtp_password: '' }),
      'Successfully updated the brand!',
    );
    expect(updated).toMatchObject({ smtp_encryption: null, smtp_username: null, smtp_password: null });
  });

  it('renames and disables a brand', async () => {
    const brand = await create({ name: unique('Rename') });
    const name = unique('Renamed');
    const updated = expectSuccess(await api.put(`${BASE}/${brand.id}`, { name, enabled: 'false' }), 'Successfully updated the brand!');
    expect(updated).toMatchObject({ id: brand.id, name, enabled: 0 });
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['an empty name', { name: '' }, 'The name field is required.'],
    ['an smtp_encryption of starttls', { smtp_encryption: 'starttls', smtp_host: 'changed.example.com' }, 'The selected smtp encryption is invalid.'],
    ['an smtp_port above 65535', { smtp_port: 65536, smtp_username: 'changed' }, 'The smtp port may not be greater than 65535.'],
  ];
  it.each(invalid)('answers 422 to %s and leaves the brand unchanged', async (_name, body, message) => {
    const brand = await create({ name: unique('Keep'), smtp_host: 'keep.example.com', smtp_encryption: 'tls', smtp_port: 587 });
    expectError(await api.put(`${BASE}/${brand.id}`, body), 422, message);
    expect(await show(brand.id)).toEqual(brand);
  });

  it.each(['4294967295', 'abc'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.put(`${BASE}/${id}`, { name: 'x' }), 'brand');
  });
});

describe('DELETE /api/core/brand/{id}', () => {
  it('is not offered: 405 with the methods that are', async () => {
    const brand = await create({ name: unique('Stay') });
    const res = await request(api.app).delete(`${BASE}/${brand.id}`).auth(api.token, 'x');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, PUT');
    expect(res.body).toMatchObject({ status: 'error', data: null });
    expect(await show(brand.id)).toEqual(brand);
  });
});
