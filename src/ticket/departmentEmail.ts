import { Op, QueryTypes, type Transaction } from 'sequelize';
import { Brand, Department, DepartmentBrand, DepartmentEmail } from '../db/models';
import { now } from '../db/entity';
import { sequelize } from '../db/sequelize';
import { MAILBOX_PASSWORD } from '../crypto/secrets';
import { SECRET_MASK, assertSecretResent, resends, storedSecret } from '../crypto/storedSecret';
import { ValidationError, invalid } from '../errors';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { TYPE_PIPED, TYPE_REMOTE } from './departmentEmailTypes';
import { pick } from '../lib/serialize';
import { Joi, field } from '../lib/validation';
import { defaultBrandId } from '../user/users/service';
import { auditCascade } from './cascadeAudit';
import { mailServerHost } from '../net/outbound';
import { ENCRYPTION_CODES, PROTOCOL_CODES, codeOf, codeOrName } from './mailboxCodes';
import { assertOAuthComplete, oauthChanges, oauthFields, oauthView, refuseInternalTokenUrl } from '../oauth/settings';

/**
 * Email addresses of a department: `/api/ticket/department/{id}/email[/{email_id}]`.
 *
 * Type 0: mail reaches the help desk by piping or forwarding (only the address matters).
 * Type 1: the mailbox worker fetches it from a remote mailbox over `protocol` 0 IMAP or 1 POP3, with
 * `encryption` 1 SSL (TLS from the first byte), 2 STARTTLS or 0 none (SupportPal's integer codes,
 * see mailboxCodes.ts; the names `imap`/`pop3`, `ssl`/`tls`/`none` are accepted too); `port` empty means the
 * protocol's usual one (IMAP 993 with ssl, else 143; POP3 995 with ssl, else 110). A remote
 * mailbox needs a server, a username and a password.
 *
 * The password is stored encrypted (crypto/secrets.ts) and never returned: responses carry
 * SECRET_MASK when one is stored, null when none. Sending the mask back leaves the stored
 * password as it is (a client can PUT what it read); an empty value removes it.
 *
 * With `auth_type` oauth2 the mailbox logs in with XOAUTH2/OAUTHBEARER instead (IMAP and POP3):
 * the oauth_* fields (src/oauth/settings.ts) replace the password, and `oauth_state` shows how
 * the worker's token refreshes go.
 */

export const DEPARTMENT_EMAIL_FIELDS = [
  'id', 'department_id', 'brand_id', 'address', 'type', 'protocol', 'server', 'username', 'password', 'port', 'encryption',
  'consume_all', 'delete_downloaded', 'last_polled_at', 'last_error', 'last_error_at', 'poll_failures', 'next_poll_at', 'created_at', 'updated_at',
] as const;

/** A department email as every response shows it (the sub-resource and the department's `emails`). */
/**
 * A department address as responses show it. `withLogin` false masks the mailbox's user name too
 * (the password always is): a department read with a token that may not read its mailboxes (no
 * core scope) shows that a login is set, never what it is, as an embedded brand's SMTP login.
 */
export function serializeDepartmentEmail(e: DepartmentEmail, withLogin = true): Record<string, any> {
  return {
    ...pick(e, DEPARTMENT_EMAIL_FIELDS),
    ...(withLogin ? {} : { username: e.username ? SECRET_MASK : null }),
    protocol: codeOf(PROTOCOL_CODES, e.protocol),
    encryption: codeOf(ENCRYPTION_CODES, e.encryption),
    password: e.password ? SECRET_MASK : null,
    ...oauthView(e),
  };
}

const PASSWORD_MAX = 255;

const fields = {
  brand_id: field.id(),
  server: field.nullable(255).hostname().custom(mailServerHost),
  port: Joi.number().integer().min(1).max(65535).allow(null, ''),
  username: field.nullable(255),
  // Not trimmed: a password may begin or end with a space.
  password: Joi.string().max(PASSWORD_MAX).allow('', null),
  ...oauthFields,
};

const createSchema = Joi.object({
  ...fields,
  address: field.email().required(),
  type: Joi.number().integer().valid(TYPE_PIPED, TYPE_REMOTE).default(TYPE_PIPED),
  protocol: codeOrName(PROTOCOL_CODES).default('imap'),
  encryption: codeOrName(ENCRYPTION_CODES).default('ssl'),
  consume_all: field.flag().default(0),
  delete_downloaded: field.flag().default(0),
});

const updateSchema = Joi.object({
  ...fields,
  address: field.email(),
  type: Joi.number().integer().valid(TYPE_PIPED, TYPE_REMOTE),
  protocol: codeOrName(PROTOCOL_CODES),
  encryption: codeOrName(ENCRYPTION_CODES),
  consume_all: field.flag(),
  delete_downloaded: field.flag(),
});

const COLUMNS = ['address', 'type', 'protocol', 'server', 'port', 'encryption', 'username', 'consume_all', 'delete_downloaded'] as const;

/** The stored form of a sent password: undefined leaves it, null removes it. */
const storedPassword = (sent: string | null | undefined) =>
  storedSecret(sent, MAILBOX_PASSWORD, 'The password cannot be stored: the server has no SECRET_KEY to encrypt mailbox passwords with.');

/** One department per address (the database's unique key backs this up against races). */
async function assertAddressFree(address: string, exceptId: number | null, transaction: Transaction): Promise<void> {
  const taken = await DepartmentEmail.findOne({
    attributes: ['id'], where: { address, ...(exceptId ? { id: { [Op.ne]: exceptId } } : {}) }, transaction,
  });
  if (taken) throw new ValidationError('The address has already been taken.');
}

/** The brand of an address: one of the department's brands (the first when none is sent). */
async function brandFor(department: Department, brandId: number | undefined, transaction: Transaction): Promise<number> {
  const linked = (await DepartmentBrand.findAll({ where: { department_id: department.id }, order: [['brand_id', 'ASC']], transaction })).map((l) => l.brand_id);
  if (brandId === undefined) return linked[0] ?? defaultBrandId(transaction);
  if (linked.length ? !linked.includes(brandId) : !(await Brand.findByPk(brandId, { attributes: ['id'], transaction }))) throw invalid('brand_id');
  return brandId;
}

/** A remote mailbox can be fetched only with a server, a username and a password (or its OAuth2 settings). */
function assertFetchable(values: { type: number; server: string | null; username: string | null; password: string | null; auth_type: string }): void {
  if (values.type !== TYPE_REMOTE) return;
  for (const name of ['server', 'username', ...(values.auth_type === 'oauth2' ? [] : ['password'] as const)] as const) {
    if (!values[name]) throw new ValidationError(`The ${name} field is required when type is ${TYPE_REMOTE}.`);
  }
}

export const departmentEmailResource: ResourceDef<DepartmentEmail> = {
  path: '/department/:department/email',
  parent: { model: Department, label: 'department', param: 'department', column: 'department_id' },
  model: DepartmentEmail,
  label: 'department email',
  sortable: ['address', 'type', 'created_at', 'updated_at'],
  createSchema,
  updateSchema,

  async create(input, { transaction, parent }) {
    const department = parent as Department;
    await assertAddressFree(input.address, null, transaction);
    const password = storedPassword(input.password) ?? null;
    const values = pick(input, COLUMNS);
    await refuseInternalTokenUrl(input);
    const oauth = { auth_type: 'password' as const, ...oauthChanges('department_emails', input, null) };
    assertOAuthComplete(oauth);
    assertFetchable({ type: values.type, server: values.server, username: values.username, password, auth_type: oauth.auth_type });
    return DepartmentEmail.create({
      ...values, ...oauth, department_id: department.id, brand_id: await brandFor(department, input.brand_id, transaction), password,
    }, { transaction });
  },

  async update(email, input, { transaction, parent }) {
    if (input.address !== undefined && input.address !== email.address) await assertAddressFree(input.address, email.id, transaction);
    const password = storedPassword(input.password);
    const values: Record<string, any> = {};
    for (const k of COLUMNS) if (input[k] !== undefined) values[k] = input[k];
    if (password !== undefined) values.password = password;
    if (input.brand_id !== undefined) values.brand_id = await brandFor(parent as Department, input.brand_id, transaction);
    await refuseInternalTokenUrl(input);
    const oauth = oauthChanges('department_emails', input, email);
    const changed = (k: string) => k in values && values[k] !== (email as any)[k];
    // New settings are tried at the next round, not after the backoff of the old ones' failures.
    if (['type', 'protocol', 'server', 'port', 'encryption', 'username', 'password'].some(changed) || 'oauth_access_token' in oauth) {
      Object.assign(values, { poll_failures: 0, next_poll_at: null });
    }
    Object.assign(values, oauth);
    assertOAuthComplete({ ...email.get({ plain: true }), ...oauth });
    // The login goes where the mailbox is: another server, port, protocol or encryption takes the
    // password (or, with OAuth2, the refresh token, whose access tokens it would be sent) again.
    const where = ['server', 'port', 'protocol', 'encryption'].filter(changed);
    if ((values.auth_type ?? email.auth_type) === 'oauth2') assertSecretResent('oauth_refresh_token', where, !!email.oauth_refresh_token, resends(input.oauth_refresh_token));
    else assertSecretResent('password', where, !!email.password, resends(input.password));
    // Another mailbox altogether: its UIDs mean nothing to the old cursor. Its next poll is a first
    // poll, which leaves the mails already read alone (src/mailbox/imap.ts).
    if (['protocol', 'server', 'username'].some(changed)) Object.assign(values, { imap_uidvalidity: null, imap_last_uid: 0, imap_first_poll_uid: 0, imap_swept_uid: 0 });
    assertFetchable({
      type: values.type ?? email.type, server: 'server' in values ? values.server : email.server,
      username: 'username' in values ? values.username : email.username, password: 'password' in values ? values.password : email.password,
      auth_type: values.auth_type ?? email.auth_type,
    });
    // A poll begun with the old settings stops at its next batch and writes nothing over the new
    // ones, the cursor reset above included (src/mailbox/pollGuard.ts).
    if (Object.keys(values).some(changed)) values.settings_version = email.settings_version + 1;
    await email.update(values, { transaction });
  },

  // Its tickets take their department's first other address of their brand, as a ticket moved
  // into the department does (none when there is no other): mail keeps going out from the department.
  async destroy(email, { transaction }) {
    // Audited, and a ticket.updated each, as a ticket update of department_email would be (auditCascade).
    await auditCascade('department_email_id', email.id,
      `CONCAT('{"department_email_id":{"before":', k.department_email_id, ',"after":', IFNULL((
         SELECT MIN(e.id) FROM department_emails e WHERE e.department_id = k.department_id AND e.brand_id = k.brand_id AND e.id <> :id
       ), 'null'), '}}')`,
      transaction);
    await sequelize().query(
      `UPDATE tickets SET updated_at = :now, department_email_id = (
         SELECT MIN(e.id) FROM department_emails e WHERE e.department_id = tickets.department_id AND e.brand_id = tickets.brand_id AND e.id <> :id
       ) WHERE department_email_id = :id`,
      { replacements: { id: email.id, now: now() }, transaction, type: QueryTypes.UPDATE },
    );
    await email.destroy({ transaction });
  },

  serialize: (e) => serializeDepartmentEmail(e),
};

export const departmentEmailRouter = resourceRouter(departmentEmailResource);
