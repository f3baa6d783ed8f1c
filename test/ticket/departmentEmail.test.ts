import { UniqueConstraintError } from 'sequelize';
import { Brand, Department, DepartmentBrand, DepartmentEmail, Ticket } from '../../src/db/models';
import { MAILBOX_PASSWORD, decryptSecret } from '../../src/crypto/secrets';
import { sequelize } from '../../src/db/sequelize';
import { SECRET_MASK } from '../../src/crypto/storedSecret';
import { defaultPort } from '../../src/ticket/departmentEmailTypes';
import { useApi, unique } from '../helpers/app';
import { ticketContext, ticketFactories } from './ticketSupport';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const EMAIL_KEYS = [
  'id', 'department_id', 'brand_id', 'address', 'type', 'protocol', 'server', 'username', 'password', 'port', 'encryption', 'consume_all',
  'delete_downloaded', 'last_polled_at', 'last_error', 'last_error_at', 'poll_failures', 'next_poll_at', 'created_at', 'updated_at',
  // The OAuth2 extension (docs/mail.md, OAuth2).
  'auth_type', 'oauth_provider', 'oauth_client_id', 'oauth_client_secret', 'oauth_tenant', 'oauth_token_url', 'oauth_scope', 'oauth_refresh_token', 'oauth_state',
];

const address = (prefix = 'help') => `${unique(prefix)}@example.com`.toLowerCase();
const base = (deptId: number) => `/api/ticket/department/${deptId}/email`;
const makeDepartment = async (brands: number[] = [1]) => {
  const dept = await Department.create({ name: unique('Dept') });
  if (brands.length) await DepartmentBrand.bulkCreate(brands.map((brand_id) => ({ department_id: dept.id, brand_id })));
  return dept;
};
/** The password column as stored, read past the model. */
const storedPassword = async (id: number): Promise<string | null> =>
  ((await sequelize().query('SELECT password FROM department_emails WHERE id = ?', { replacements: [id], plain: true })) as any).password;

const REMOTE = { type: 1, protocol: 'imap', server: 'imap.example.com', port: 993, encryption: 'ssl', username: 'help', password: 'S3cret pass ' };
/** REMOTE as responses show it: SupportPal's integer codes (protocol 0 IMAP; encryption 1 SSL/TLS). */
const REMOTE_SHOWN = { ...REMOTE, protocol: 0, encryption: 1 };

describe('POST /api/ticket/department/{id}/email', () => {
  it('adds a piped address with the defaults', async () => {
    const dept = await makeDepartment();
    const addr = address();
    const data = expectSuccess(await api.post(base(dept.id), { address: addr.toUpperCase() }), 'Successfully created new department email!');
    expect(Object.keys(data).sort()).toEqual([...EMAIL_KEYS].sort());
    expect(data).toMatchObject({
      department_id: dept.id, brand_id: 1, address: addr, type: 0, protocol: 0, server: null, username: null, password: null, port: null,
      encryption: 1, consume_all: 0, delete_downloaded: 0, last_polled_at: null, last_error: null, last_error_at: null, poll_failures: 0, next_poll_at: null,
    });
    expect(expectSuccess(await api.get(`${base(dept.id)}/${data.id}`))).toEqual(data);
  });

  it('stores a remote mailbox with its password encrypted, and never returns it', async () => {
    const dept = await makeDepartment();
    const data = expectSuccess(await api.post(base(dept.id), { address: address(), ...REMOTE, consume_all: 1, delete_downloaded: 'true' }), 'Successfully created new department email!');
    expect(data).toMatchObject({ ...REMOTE_SHOWN, password: SECRET_MASK, consume_all: 1, delete_downloaded: 1 });
    const stored = await storedPassword(data.id);
    expect(stored).not.toContain('S3cret');
    expect(stored).toMatch(/^v1:[0-9a-f]{8}:[A-Za-z0-9+/]+=*$/);
    expect(decryptSecret(stored!, MAILBOX_PASSWORD)).toBe('S3cret pass ');
    // The department embeds the same presentation.
    const department = expectSuccess(await api.get(`/api/ticket/department/${dept.id}`));
    expect(department.emails).toEqual([data]);
    expect(JSON.stringify(department)).not.toContain('S3cret');
  });

  it('takes the brand from the department, or a brand of the department', async () => {
    const brand = await Brand.create({ name: unique('brand') });
    const other = await Brand.create({ name: unique('brand') });
    const dept = await makeDepartment([brand.id, 1]);
    expect(expectSuccess(await api.post(base(dept.id), { address: address() }), 'Successfully created new department email!').brand_id).toBe(1);
    expect(expectSuccess(await api.post(base(dept.id), { address: address(), brand_id: brand.id }), 'Successfully created new department email!').brand_id).toBe(brand.id);
    expectError(await api.post(base(dept.id), { address: address(), brand_id: other.id }), 422, 'The selected brand id is invalid.');
    // A department without brands: any brand, the default one when none is sent.
    const loose = await makeDepartment([]);
    expect(expectSuccess(await api.post(base(loose.id), { address: address(), brand_id: other.id }), 'Successfully created new department email!').brand_id).toBe(other.id);
    expectError(await api.post(base(loose.id), { address: address(), brand_id: 999999 }), 422, 'The selected brand id is invalid.');
  });

  it('keeps an address to one department: 422, also against the database key', async () => {
    const [a, b] = [await makeDepartment(), await makeDepartment()];
    const addr = address('dup');
    expectSuccess(await api.post(base(a.id), { address: addr }), 'Successfully created new department email!');
    expectError(await api.post(base(b.id), { address: addr }), 422, 'The address has already been taken.');
    expectError(await api.post(base(a.id), { address: addr.toUpperCase() }), 422, 'The address has already been taken.');
    // The unique key names the field, so a race that passes the check reads the same.
    const err = await DepartmentEmail.create({ department_id: b.id, brand_id: 1, address: addr }).catch((e) => e);
    expect(err).toBeInstanceOf(UniqueConstraintError);
    expect(err.errors[0].path).toBe('address');
  });

  it.each([
    [{}, 'The address field is required.'],
    [{ address: 'not-an-email' }, 'The address must be a valid email address.'],
    [{ address: 'a@example.com', type: 2 }, 'The selected type is invalid.'],
    [{ address: 'a@example.com', protocol: 'smtp' }, 'The selected protocol is invalid.'],
    [{ address: 'a@example.com', encryption: 'starttls' }, 'The selected encryption is invalid.'],
    [{ address: 'a@example.com', port: 70000 }, 'The port may not be greater than 65535.'],
    [{ address: 'a@example.com', server: 'bad host!' }, 'The server must be a valid host name or IP address.'],
    [{ address: 'a@example.com', consume_all: 'x' }, 'The consume all field must be true or false.'],
    [{ address: 'a@example.com', type: 1, username: 'u', password: 'p' }, 'The server field is required when type is 1.'],
    [{ address: 'a@example.com', type: 1, server: 'mail.example.com', password: 'p' }, 'The username field is required when type is 1.'],
    [{ address: 'a@example.com', type: 1, server: 'mail.example.com', username: 'u' }, 'The password field is required when type is 1.'],
    [{ address: 'a@example.com', password: 'x'.repeat(256) }, 'The password may not be greater than 255 characters.'],
  ] as Array<[Record<string, unknown>, string]>)('422 %j → %s', async (form, message) => {
    const dept = await makeDepartment();
    expectError(await api.post(base(dept.id), form), 422, message);
    expect(await DepartmentEmail.count({ where: { department_id: dept.id } })).toBe(0);
  });

  it('404 for an unknown department, before validation', async () => {
    expectNotFound(await api.post(base(999999), {}), 'department');
    expectNotFound(await api.get(base(999999)), 'department');
    expectNotFound(await api.get(`${base(999999)}/1`), 'department');
  });
});

describe('GET /api/ticket/department/{id}/email', () => {
  it('lists the department\'s addresses only, with count and paging', async () => {
    const [a, b] = [await makeDepartment(), await makeDepartment()];
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push(await DepartmentEmail.create({ department_id: a.id, brand_id: 1, address: address() }));
    await DepartmentEmail.create({ department_id: b.id, brand_id: 1, address: address() });
    const res = await api.get(base(a.id));
    expect(expectList(res).map((e) => e.id)).toEqual(mine.map((e) => e.id));
    expect(res.body.count).toBe(3);
    const page = await api.get(base(a.id), { start: 2, limit: 1, order_direction: 'desc' });
    expect(expectList(page).map((e) => e.id)).toEqual([mine[1].id]);
    expect(page.body.count).toBe(3);
  });

  it('404 for an address of another department', async () => {
    const [a, b] = [await makeDepartment(), await makeDepartment()];
    const email = await DepartmentEmail.create({ department_id: a.id, brand_id: 1, address: address() });
    expectNotFound(await api.get(`${base(b.id)}/${email.id}`), 'department email');
    expectNotFound(await api.put(`${base(b.id)}/${email.id}`, { address: address() }), 'department email');
    expectNotFound(await api.del(`${base(b.id)}/${email.id}`), 'department email');
    expect(await DepartmentEmail.findByPk(email.id)).not.toBeNull();
  });
});

describe('PUT /api/ticket/department/{id}/email/{email_id}', () => {
  const remote = async () => {
    const dept = await makeDepartment();
    const data = expectSuccess(await api.post(base(dept.id), { address: address(), ...REMOTE }), 'Successfully created new department email!');
    return { dept, data, url: `${base(dept.id)}/${data.id}` };
  };

  it('keeps the password when none is sent, or when the mask is sent back', async () => {
    const { data, url } = await remote();
    const before = await storedPassword(data.id);
    const updated = expectSuccess(await api.put(url, { username: 'help2', delete_downloaded: 1 }), 'Successfully updated the department email!');
    expect(updated).toMatchObject({ server: 'imap.example.com', port: 993, password: SECRET_MASK, username: 'help2' });
    expect(await storedPassword(data.id)).toBe(before);
    // A client that PUTs back what it read changes nothing.
    const { id, created_at, updated_at, department_id, last_polled_at, last_error, last_error_at, ...readBack } = updated;
    expectSuccess(await api.put(url, readBack), 'Successfully updated the department email!');
    expect(await storedPassword(data.id)).toBe(before);
  });

  it.each([
    [{ server: 'attacker.example.net' }, 'server'],
    [{ port: 1143 }, 'port'],
    [{ port: '' }, 'port'],
    [{ encryption: 'none' }, 'encryption'],
    [{ protocol: 'pop3', password: SECRET_MASK }, 'protocol'],
  ] as Array<[Record<string, unknown>, string]>)('sends the stored password to no other place: %j needs the password again, and changes nothing without it', async (form, changed) => {
    const { data, url } = await remote();
    const before = await DepartmentEmail.findByPk(data.id);
    expectError(await api.put(url, form), 422, `The password field is required when the ${changed} changes: the stored password is not sent to another server.`);
    expect((await DepartmentEmail.findByPk(data.id))!.get({ plain: true })).toEqual(before!.get({ plain: true }));
    const { password: _sent, ...where } = form;
    expect(expectSuccess(await api.put(url, { ...where, password: 'n3w' }), 'Successfully updated the department email!')).toMatchObject({ password: SECRET_MASK });
    expect(decryptSecret((await storedPassword(data.id))!, MAILBOX_PASSWORD)).toBe('n3w');
  });

  it('replaces the password (a new encryption), and removes it with an empty value', async () => {
    const { data, url } = await remote();
    const before = await storedPassword(data.id);
    expectSuccess(await api.put(url, { password: 'n3w' }), 'Successfully updated the department email!');
    const after = await storedPassword(data.id);
    expect(after).not.toBe(before);
    expect(decryptSecret(after!, MAILBOX_PASSWORD)).toBe('n3w');
    // A remote mailbox needs one; a piped address may drop it.
    expectError(await api.put(url, { password: '' }), 422, 'The password field is required when type is 1.');
    const piped = expectSuccess(await api.put(url, { type: 0, password: '' }), 'Successfully updated the department email!');
    expect(piped).toMatchObject({ type: 0, password: null });
    expect(await storedPassword(data.id)).toBeNull();
    // Back to remote without a password: refused.
    expectError(await api.put(url, { type: 1 }), 422, 'The password field is required when type is 1.');
  });

  it('changes the address unless another department has it', async () => {
    const { data, url } = await remote();
    const taken = await DepartmentEmail.create({ department_id: (await makeDepartment()).id, brand_id: 1, address: address() });
    expectError(await api.put(url, { address: taken.address }), 422, 'The address has already been taken.');
    expect(expectSuccess(await api.put(url, { address: data.address }), 'Successfully updated the department email!').address).toBe(data.address);
    const next = address();
    expect(expectSuccess(await api.put(url, { address: next, protocol: 'POP3', encryption: 'tls', password: 'p' }), 'Successfully updated the department email!'))
      .toMatchObject({ address: next, protocol: 1, encryption: 2 });
  });

  it.each([
    [{ protocol: 1, encryption: 2 }, 'pop3', 'tls', 1, 2],
    [{ protocol: '0', encryption: '0' }, 'imap', 'none', 0, 0],
    [{ protocol: 'imap', encryption: 1 }, 'imap', 'ssl', 0, 1],
    [{ protocol: '1', encryption: 'NONE' }, 'pop3', 'none', 1, 0],
  ] as Array<[Record<string, unknown>, string, string, number, number]>)('takes protocol and encryption as codes or names: %j', async (form, protocol, encryption, protocolCode, encryptionCode) => {
    const { data, url } = await remote();
    const shown = expectSuccess(await api.put(url, { ...form, password: 'p' }), 'Successfully updated the department email!');
    expect(shown).toMatchObject({ protocol: protocolCode, encryption: encryptionCode });
    expect(expectSuccess(await api.get(url))).toMatchObject({ protocol: protocolCode, encryption: encryptionCode });
    expect(await DepartmentEmail.findByPk(data.id)).toMatchObject({ protocol, encryption });
  });

  it.each([
    [{ protocol: 2 }, 'The selected protocol is invalid.'],
    [{ protocol: -1 }, 'The selected protocol is invalid.'],
    [{ encryption: 3 }, 'The selected encryption is invalid.'],
    [{ encryption: '1.0' }, 'The selected encryption is invalid.'],
    [{ encryption: true }, 'The selected encryption is invalid.'],
  ] as Array<[Record<string, unknown>, string]>)('refuses a code that is none: %j', async (form, message) => {
    const { data, url } = await remote();
    expectError(await api.putJson(url, form), 422, message);
    expect(await DepartmentEmail.findByPk(data.id)).toMatchObject({ protocol: 'imap', encryption: 'ssl' });
  });

  it('leaves the read-only status fields alone', async () => {
    const { data, url } = await remote();
    await DepartmentEmail.update({ last_polled_at: 1700000000, last_error: 'Login failed', last_error_at: 1700000001 }, { where: { id: data.id } });
    const updated = expectSuccess(await api.put(url, { last_polled_at: 5, last_error: null, consume_all: 1 }), 'Successfully updated the department email!');
    expect(updated).toMatchObject({ last_polled_at: 1700000000, last_error: 'Login failed', last_error_at: 1700000001, consume_all: 1 });
  });
});

describe('DELETE /api/ticket/department/{id}/email/{email_id}', () => {
  it('deletes an address', async () => {
    const dept = await makeDepartment();
    const email = await DepartmentEmail.create({ department_id: dept.id, brand_id: 1, address: address() });
    expectDeleted(await api.del(`${base(dept.id)}/${email.id}`), 'department email');
    expect(await DepartmentEmail.findByPk(email.id)).toBeNull();
    expectNotFound(await api.get(`${base(dept.id)}/${email.id}`), 'department email');
    expect(await Department.findByPk(dept.id)).not.toBeNull();
  });

  it('its tickets take the department\'s first other address of their brand, none when there is no other', async () => {
    const ctx = await ticketContext();
    const f = ticketFactories(api, () => ctx);
    const dept = await makeDepartment([ctx.brandId]);
    const [first, second, third] = await DepartmentEmail.bulkCreate([address(), address(), address()].map((a) => ({ department_id: dept.id, brand_id: ctx.brandId, address: a })));
    // The installed priority is offered in every department: no priority of the test's own (a new
    // one restricted to this department would come first by order, and other files' tickets take the first).
    const ticket = await f.ticket({ department: dept.id });
    expect(ticket.department_email_id).toBe(first.id);
    expectDeleted(await api.del(`${base(dept.id)}/${first.id}`), 'department email');
    expect((await Ticket.findByPk(ticket.id))!.department_email_id).toBe(second.id);
    expectDeleted(await api.del(`${base(dept.id)}/${third.id}`), 'department email');
    expect((await Ticket.findByPk(ticket.id))!.department_email_id).toBe(second.id);
    expectDeleted(await api.del(`${base(dept.id)}/${second.id}`), 'department email');
    expect((await Ticket.findByPk(ticket.id))!.department_email_id).toBeNull();
  });
});

describe('usual ports', () => {
  it.each([['imap', 'ssl', 993], ['imap', 'tls', 143], ['imap', 'none', 143], ['pop3', 'ssl', 995], ['pop3', 'tls', 110], ['pop3', 'none', 110]])(
    '%s with %s: %i', (protocol, encryption, port) => {
      expect(defaultPort(protocol, encryption)).toBe(port);
    },
  );
});
