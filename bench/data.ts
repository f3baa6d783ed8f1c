import { Op, type ModelStatic, type Transaction } from 'sequelize';
import { now } from '../src/db/entity';
import {
  Brand, CustomField, CustomFieldValue, Group, IpBan, Organisation, OrganisationDomain, User, UserEmail, UserGroup, UserPhone,
} from '../src/db/models';
import { sequelize } from '../src/db/sequelize';

/**
 * The benchmark's data set, written once with bulk inserts (the API would take minutes and is not
 * what is measured). Every value is a pure function of the record's index, so a dropped and
 * re-created database holds the same data, and the records a scenario targets can be found again
 * by their email or address without any state kept between runs.
 */
export const SIZES = { users: 20_000, organisations: 2_000, operators: 200, ipBans: 5_000 } as const;
const BATCH = 1_000;

/** The user shown by "show one user": seeded with every relation (organisation, phones, groups, emails, custom fields). */
const SHOW_USER = 1_234;
/** The user looked up by "list users filtered by email". */
const EMAIL_USER = 4_321;
/** The ban looked up by "list IP bans filtered by ip". */
const FILTER_BAN = 2_500;

/** A deterministic number in [0, 1) for record `i` and purpose `salt` (a 32-bit integer hash). */
function rand(i: number, salt: number): number {
  let h = Math.imul(i + 1, 0x9e3779b1) ^ Math.imul(salt + 1, 0x85ebca77);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
  return ((h ^ (h >>> 15)) >>> 0) / 2 ** 32;
}
const pickOf = <T>(list: readonly T[], i: number, salt: number): T => list[Math.floor(rand(i, salt) * list.length)];

const FIRST = ['Alice', 'Bruno', 'Chloé', 'Dmitri', 'Emma', 'Farid', 'Grace', 'Hugo', 'Ines', 'Jonas', 'Keiko', 'Liam', 'Maya', 'Noah', 'Olga', 'Pavel', 'Quinn', 'Rosa', 'Sami', 'Tara'];
const LAST = ['Anderson', 'Bernard', 'Costa', 'Dubois', 'Evans', 'Fischer', 'García', 'Hansen', 'Ivanova', 'Jensen', 'Kowalski', 'López', 'Müller', 'Novak', "O'Brien", 'Petit', 'Rossi', 'Schmidt', 'Tanaka', 'Weber'];
const WORDS = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Vandelay', 'Stark', 'Wayne', 'Wonka', 'Tyrell', 'Cyberdyne', 'Soylent'];
const SUFFIXES = ['Ltd', 'GmbH', 'SARL', 'Inc', 'BV', 'SpA'];
const FREEMAIL = ['mail.example', 'post.example', 'inbox.example'];
const COUNTRIES = ['GB', 'FR', 'DE', 'ES', 'NL', 'IT', 'US', 'PL'];
const TIMEZONES = ['Europe/London', 'Europe/Paris', 'Europe/Berlin', 'Europe/Madrid', 'America/New_York'];
const TWO_YEARS = 2 * 365 * 24 * 3600;

const ascii = (s: string) => s.normalize('NFD').replace(/[^A-Za-z]/g, '').toLowerCase();

/** Created some time in the last two years, updated since (the columns the lists filter and sort on). */
function stamps(i: number, salt: number, t: number) {
  const created = t - Math.floor(rand(i, salt) * TWO_YEARS);
  return { created_at: created, updated_at: created + Math.floor(rand(i, salt + 1) * (t - created)) };
}

const orgName = (j: number) => `${pickOf(WORDS, j, 1)} ${pickOf(SUFFIXES, j, 2)} ${j}`;
const orgDomain = (j: number) => `${ascii(pickOf(WORDS, j, 1))}-${j}.example`;

/** The organisation of user `i` (index), or null: seven users in ten belong to one. */
const orgOfUser = (i: number): number | null => (i === SHOW_USER || rand(i, 10) < 0.7 ? Math.floor(rand(i, 11) * SIZES.organisations) : null);

/**
 * The customer given every sixteenth bench ticket (bench/tickets.ts, ensureBusyCustomer): the last
 * user of the seed in no organisation, so that the organisations' lists keep their tickets.
 */
export const BUSY_CUSTOMER_EMAIL = (() => {
  let i = SIZES.users - 1;
  while (orgOfUser(i) !== null) i--;
  return userEmail(i);
})();

function userEmail(i: number): string {
  const org = orgOfUser(i);
  const domain = org === null ? pickOf(FREEMAIL, i, 12) : orgDomain(org);
  return `${ascii(pickOf(FIRST, i, 13))}.${ascii(pickOf(LAST, i, 14))}.${i}@${domain}`;
}

/** Ban `b` (1-based) is at 10.0.0.0/16 and up: never the benchmark client's 127.0.0.1. */
const banIp = (b: number) => `10.${(b >> 16) & 255}.${(b >> 8) & 255}.${b & 255}`;

/** Inserts `rows` in batches of BATCH (one INSERT each). */
async function insert(model: ModelStatic<any>, rows: Array<Record<string, unknown>>, transaction: Transaction) {
  for (let k = 0; k < rows.length; k += BATCH) await model.bulkCreate(rows.slice(k, k + BATCH), { transaction });
}

/** Ids of the rows just inserted, by a unique column (bulk inserts do not hand them back reliably). */
async function idsBy(model: typeof User | typeof Organisation, column: 'email' | 'name', values: string[], transaction: Transaction, where: object = {}) {
  const ids = new Map<string, number>();
  for (let k = 0; k < values.length; k += BATCH) {
    const rows = await (model as typeof User).findAll({
      where: { ...where, [column]: { [Op.in]: values.slice(k, k + BATCH) } }, attributes: ['id', column], transaction, raw: true,
    });
    for (const r of rows as unknown as Array<Record<string, any>>) ids.set(r[column], r.id);
  }
  return values.map((v) => {
    const id = ids.get(v);
    if (id === undefined) throw new Error(`bench seed: no row for ${v}`);
    return id;
  });
}

async function ensureGroups(type: 'user' | 'operator', names: string[], transaction: Transaction): Promise<number[]> {
  const ids: number[] = [];
  for (const name of names) {
    const [group] = await Group.findOrCreate({ where: { type, name }, defaults: { type, name, description: `${name} (benchmark)`, colour: '#888888', administrator: 0 }, transaction });
    ids.push(group.id);
  }
  return ids;
}

async function ensureField(kind: 'user' | 'organisation', name: string, type: number, order: number, transaction: Transaction): Promise<number> {
  const [field] = await CustomField.findOrCreate({ where: { kind, name }, defaults: { kind, name, type, order, description: null }, transaction });
  return field.id;
}

async function seed(transaction: Transaction): Promise<void> {
  const t = now();
  const brand = await Brand.findOne({ order: [['id', 'ASC']], transaction });
  if (!brand) throw new Error('bench seed: no brand (prepareDatabase runs the seed first)');

  const userGroups = await ensureGroups('user', ['Customers', 'Partners', 'Resellers', 'VIP', 'Beta testers'], transaction);
  const operatorGroups = await ensureGroups('operator', ['First line', 'Second line', 'Billing'], transaction);
  const customerNumber = await ensureField('user', 'Customer number', 8 /* Text */, 1, transaction);
  const newsletter = await ensureField('user', 'Newsletter', 1 /* Checkbox */, 2, transaction);
  const accountManager = await ensureField('organisation', 'Account manager', 8 /* Text */, 1, transaction);

  // Organisations, each with one domain and, for half of them, a custom field value.
  const orgIdx = Array.from({ length: SIZES.organisations }, (_, j) => j);
  await insert(Organisation, orgIdx.map((j) => ({
    brand_id: brand.id, name: orgName(j), country: pickOf(COUNTRIES, j, 3), language_code: 'en', timezone: pickOf(TIMEZONES, j, 4),
    notes: rand(j, 5) < 0.3 ? `Key account since ${2015 + (j % 10)}.` : null, ...stamps(j, 6, t),
  })), transaction);
  const orgIds = await idsBy(Organisation, 'name', orgIdx.map(orgName), transaction);
  await insert(OrganisationDomain, orgIdx.map((j) => ({ organisation_id: orgIds[j], brand_id: brand.id, domain: orgDomain(j) })), transaction);
  await insert(CustomFieldValue, orgIdx.filter((j) => rand(j, 7) < 0.5)
    .map((j) => ({ field_id: accountManager, owner_id: orgIds[j], value: `${pickOf(FIRST, j, 8)} ${pickOf(LAST, j, 9)}` })), transaction);

  // Users: 70% in an organisation, 0-2 phones, 1-2 groups, 10% with additional emails, custom field values.
  const userIdx = Array.from({ length: SIZES.users }, (_, i) => i);
  await insert(User, userIdx.map((i) => {
    const org = orgOfUser(i);
    return {
      type: 'user', brand_id: brand.id, firstname: pickOf(FIRST, i, 13), lastname: pickOf(LAST, i, 14), email: userEmail(i),
      email_verified: rand(i, 15) < 0.8 ? 1 : 0, active: rand(i, 16) < 0.95 ? 1 : 0,
      organisation_id: org === null ? null : orgIds[org], organisation_access_level: org === null ? null : rand(i, 17) < 0.1 ? 0 : 1,
      country: pickOf(COUNTRIES, i, 18), language_code: 'en', timezone: pickOf(TIMEZONES, i, 19), ...stamps(i, 20, t),
    };
  }), transaction);
  const userIds = await idsBy(User, 'email', userIdx.map(userEmail), transaction, { type: 'user' });
  const full = (i: number) => i === SHOW_USER;
  await insert(UserPhone, userIdx.flatMap((i) => {
    const n = full(i) ? 2 : Math.floor(rand(i, 21) * 3);
    return Array.from({ length: n }, (_, k) => ({ user_id: userIds[i], number: `+4420794${String(i * 3 + k).padStart(5, '0')}` }));
  }), transaction);
  await insert(UserGroup, userIdx.flatMap((i) => {
    const first = Math.floor(rand(i, 22) * userGroups.length);
    const groups = full(i) || rand(i, 23) < 0.3 ? [first, (first + 1) % userGroups.length] : [first];
    return groups.map((g) => ({ user_id: userIds[i], group_id: userGroups[g] }));
  }), transaction);
  await insert(UserEmail, userIdx.filter((i) => full(i) || rand(i, 24) < 0.1).flatMap((i) => {
    const n = full(i) ? 2 : 1 + Math.floor(rand(i, 25) * 2);
    return Array.from({ length: n }, (_, k) => ({ user_id: userIds[i], email: `alt${k}.${i}@${pickOf(FREEMAIL, i, 26)}` }));
  }), transaction);
  await insert(CustomFieldValue, userIdx.flatMap((i) => [
    ...(full(i) || rand(i, 27) < 0.6 ? [{ field_id: customerNumber, owner_id: userIds[i], value: `C-${String(100000 + i)}` }] : []),
    ...(full(i) || rand(i, 28) < 0.5 ? [{ field_id: newsletter, owner_id: userIds[i], value: rand(i, 29) < 0.5 ? '1' : '0' }] : []),
  ]), transaction);

  // Operators: no brand, one or two operator groups, one phone.
  const opIdx = Array.from({ length: SIZES.operators }, (_, k) => k);
  const operatorEmail = (k: number) => `operator.${k}@helpdesk.example`;
  await insert(User, opIdx.map((k) => ({
    type: 'operator', brand_id: null, firstname: pickOf(FIRST, k, 30), lastname: pickOf(LAST, k, 31), email: operatorEmail(k),
    email_verified: 1, active: 1, language_code: 'en', timezone: 'Europe/London', ...stamps(k, 32, t),
  })), transaction);
  const operatorIds = await idsBy(User, 'email', opIdx.map(operatorEmail), transaction, { type: 'operator' });
  await insert(UserGroup, opIdx.flatMap((k) => (rand(k, 33) < 0.3 ? [0, 1] : [k % operatorGroups.length])
    .map((g) => ({ user_id: operatorIds[k], group_id: operatorGroups[g] }))), transaction);
  await insert(UserPhone, opIdx.map((k) => ({ user_id: operatorIds[k], number: `+4420796${String(k).padStart(5, '0')}` })), transaction);

  // IP bans: 70% permanent, the rest temporary and expiring in the next 30 days.
  await insert(IpBan, Array.from({ length: SIZES.ipBans }, (_, b0) => {
    const b = b0 + 1;
    const permanent = rand(b, 34) < 0.7;
    return {
      ip: banIp(b), reason: rand(b, 35) < 0.5 ? 'Spam from this address.' : null, type: permanent ? 1 : 0,
      expiry: permanent ? null : t + 3600 + Math.floor(rand(b, 36) * 30 * 24 * 3600), ...stamps(b, 37, t),
    };
  }), transaction);
}

/**
 * Seeds the benchmark data unless it is there. One transaction: either all of it is committed or
 * none, so "the last user exists" is a sound test for "the data set is complete".
 */
export async function ensureBenchData(log: (line: string) => void): Promise<void> {
  if (await User.findOne({ where: { type: 'user', email: userEmail(SIZES.users - 1) }, attributes: ['id'] })) return;
  log(`Seeding the benchmark data set (${SIZES.users} users, ${SIZES.organisations} organisations, ${SIZES.operators} operators, ${SIZES.ipBans} IP bans)...`);
  const started = Date.now();
  await sequelize().transaction((transaction) => seed(transaction));
  log(`Seeded in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
}

/** The records the scenarios target. */
export interface Targets {
  /** A user with every relation, for "show one user". */
  showUserId: number;
  /** The primary email of a user, for the email filter. */
  email: string;
  /** The address of a seeded ban, for the ip filter. */
  banIp: string;
}

export async function findTargets(): Promise<Targets> {
  const user = (email: string) => User.findOne({ where: { type: 'user', email }, attributes: ['id'], rejectOnEmpty: true });
  return {
    showUserId: (await user(userEmail(SHOW_USER))).id,
    email: userEmail(EMAIL_USER),
    banIp: banIp(FILTER_BAN),
  };
}
