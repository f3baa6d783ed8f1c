import { Op, UniqueConstraintError, type Transaction, type WhereOptions } from 'sequelize';
import { User } from '../../db/models';
import { lockById } from '../../db/load';
import { select } from '../../db/select';
import { sqlCondition, trusted } from '../../db/sql';
import { onceInTransaction, rolledBack } from '../../db/transaction';
import { ValidationError, invalid } from '../../errors';
import { createUsers } from '../../user/users/service';

/**
 * Who a ticket is opened for and by: the users of a brand found by address (created when nobody
 * has it), and the people a new ticket names by id. A batch of tickets (a batch of imported mails)
 * looks up all its senders in one statement and creates the new ones in one INSERT.
 */

/**
 * The user of the brand with this address (primary or additional), or null. One statement that
 * stays on the email indexes: each address column is searched on its own and the lowest id taken
 * (`email = ? OR id IN (SELECT ...)` made the optimizer walk the whole users table in id order
 * for an address nobody has, which is every new sender of a mail).
 */
export async function findUserByEmail(email: string, brandId: number, transaction?: Transaction, latest = false): Promise<User | null> {
  // A locking read sees what other transactions committed since this one began (each branch its own:
  // a derived table is read apart from the outer statement's lock).
  const lock = trusted(latest && transaction ? ' LOCK IN SHARE MODE' : '');
  const c = sqlCondition`id = (SELECT MIN(id) FROM (
    (SELECT id FROM users WHERE type = 'user' AND brand_id = ${brandId} AND email = ${email}${lock})
    UNION ALL (SELECT u.id FROM user_emails e JOIN users u ON u.id = e.user_id WHERE e.email = ${email} AND u.type = 'user' AND u.brand_id = ${brandId}${lock})
  ) AS found)`;
  return User.findOne({ where: c.literal as WhereOptions, replacements: c.replacements, transaction, lock: latest && transaction ? transaction.LOCK.SHARE : undefined });
}

/**
 * The users of the brand by address (lower case) that this transaction has looked up (null:
 * none), so that a batch of imported mails asks for all its senders in one statement
 * (primeUsersByEmail) and the users it creates are found by its later mails. `createdIn`: the
 * (sub)transaction that created the user. Only this module reads and writes it.
 */
const knownUsers = (brandId: number, transaction: Transaction) =>
  onceInTransaction(transaction, `users.byEmail:${brandId}`, async () => new Map<string, { user: User | null; createdIn?: Transaction }>());

/** Looks up the users of the brand with these addresses (primary or additional) in one statement, for findOrCreateUsers. */
export async function primeUsersByEmail(emails: string[], brandId: number, transaction: Transaction): Promise<void> {
  const known = await knownUsers(brandId, transaction);
  const missing = [...new Set(emails.map((e) => e.toLowerCase()))].filter((e) => !known.has(e));
  if (!missing.length) return;
  const rows = await select(
    `SELECT found.address AS found_address, u.* FROM (
      SELECT address, MIN(id) AS id FROM (
        SELECT email AS address, id FROM users WHERE type = 'user' AND brand_id = :brandId AND email IN (:emails)
        UNION ALL SELECT ue.email, u.id FROM user_emails ue JOIN users u ON u.id = ue.user_id WHERE ue.email IN (:emails) AND u.type = 'user' AND u.brand_id = :brandId
      ) AS matched GROUP BY address
    ) AS found JOIN users u ON u.id = found.id`,
    { brandId, emails: missing }, { transaction },
  );
  for (const e of missing) known.set(e, { user: null });
  for (const { found_address: address, ...user } of rows) {
    known.set(String(address).toLowerCase(), { user: User.build(user, { isNewRecord: false, raw: true }) });
  }
}

export interface Names {
  firstname?: string | null;
  lastname?: string | null;
  organisation?: string | null;
}

export interface WantedUser {
  /** Lower case. */
  email: string;
  brandId: number;
  /** For a user created here (an existing user is never changed). */
  names: Names;
}

/**
 * The user of the brand with this address, created (without a password, with the names and
 * organisation given) when there is none. A user created by a parallel request at the same moment
 * is found, not duplicated (findOrCreateUsers). The mailbox worker finds a reply's sender with it.
 */
export async function userForAddress(email: string, brandId: number, names: Names, transaction: Transaction): Promise<User> {
  return (await findOrCreateUsers([{ email, brandId, names }], transaction))[0].user;
}

/**
 * The users of these addresses, in order, saying which were created here: looked up in one
 * statement per brand (what the transaction has looked up already is not read again), and those
 * nobody has created in one INSERT (an address twice, once). A user another transaction created
 * a moment ago makes the INSERT fail, which leaves no row: the addresses are then read again with
 * a locking read (which sees that commit), and only those still free are created.
 */
export async function findOrCreateUsers(wanted: WantedUser[], transaction: Transaction): Promise<Array<{ user: User; created: boolean }>> {
  const brands = [...new Set(wanted.map((w) => w.brandId))];
  for (const brandId of brands) {
    const known = await knownUsers(brandId, transaction);
    // A user created in a savepoint that was rolled back since is gone: looked up again.
    for (const [email, kept] of known) if (kept.createdIn && rolledBack(kept.createdIn)) known.delete(email);
    await primeUsersByEmail(wanted.filter((w) => w.brandId === brandId).map((w) => w.email), brandId, transaction);
  }
  const knownOf = async (w: WantedUser) => (await knownUsers(w.brandId, transaction)).get(w.email.toLowerCase());
  const missing = new Map<string, WantedUser>();
  for (const w of wanted) if (!(await knownOf(w))?.user) missing.set(`${w.brandId} ${w.email.toLowerCase()}`, w);
  const createdHere = new Set<User>();
  if (missing.size) {
    let toCreate = [...missing.values()];
    try {
      await create(toCreate, transaction, createdHere);
    } catch (err) {
      if (!(err instanceof UniqueConstraintError) || !/^INSERT INTO `users`/.test(String((err as { sql?: string }).sql))) throw err;
      toCreate = [];
      for (const w of missing.values()) {
        const again = await findUserByEmail(w.email.toLowerCase(), w.brandId, transaction, true);
        if (again) (await knownUsers(w.brandId, transaction)).set(w.email.toLowerCase(), { user: again });
        else toCreate.push(w);
      }
      await create(toCreate, transaction, createdHere);
    }
  }
  return Promise.all(wanted.map(async (w) => {
    const user = (await knownOf(w))!.user!;
    return { user, created: createdHere.has(user) };
  }));
}

async function create(wanted: WantedUser[], transaction: Transaction, createdHere: Set<User>): Promise<void> {
  // Just looked up in this transaction: nobody of the brand has these addresses (a concurrent
  // creator of the same address is stopped by the unique key of person_emails).
  const users = await createUsers(wanted.map(({ email, brandId, names }) => ({
    email: email.toLowerCase(), brand_id: brandId, firstname: names.firstname || null, lastname: names.lastname || null,
    ...(names.organisation ? { organisation: names.organisation } : {}),
  })), transaction, { addressFree: true, implicit: true });
  for (const [i, w] of wanted.entries()) {
    (await knownUsers(w.brandId, transaction)).set(w.email.toLowerCase(), { user: users[i], createdIn: transaction });
    createdHere.add(users[i]);
  }
}

/** Who a new ticket names: by id (`userId`, `onBehalfOf`, `internal`), or by address (`userEmail`). */
export interface PeopleInput {
  userId?: number;
  onBehalfOf?: number;
  internal?: boolean;
  userEmail?: string;
  userFirstname?: string | null;
  userLastname?: string | null;
  userOrganisation?: string | null;
}

export interface People {
  /** The ticket's user. */
  owner: User;
  /** Who writes the first message. */
  author: User;
}

/** A person by id, read with a share lock: they cannot be deleted under the ticket and message written for them. */
async function person(id: number, field: string, transaction: Transaction, check: (u: User) => boolean): Promise<User> {
  const user = await lockById(User, id, transaction, 'share');
  if (!user || !check(user)) throw invalid(field);
  return user;
}

const byAddress = (input: PeopleInput) => !input.internal && input.onBehalfOf === undefined && input.userId === undefined && !!input.userEmail;

/**
 * The people of new tickets (each of `brandId`), in order. Those named by address are found or
 * created together (findOrCreateUsers), and those found read again with a share lock by their key
 * (no gap lock), in one statement: it sees a user another transaction created a moment ago, and
 * keeps them from being deleted under the ticket.
 */
export async function resolvePeople(items: Array<{ input: PeopleInput; brandId: number }>, transaction: Transaction): Promise<People[]> {
  const addressed = items.filter(({ input }) => byAddress(input));
  const found = await findOrCreateUsers(addressed.map(({ input, brandId }) => ({
    email: input.userEmail!.trim().toLowerCase(), brandId,
    names: { firstname: input.userFirstname, lastname: input.userLastname, organisation: input.userOrganisation },
  })), transaction);
  const toLock = [...new Set(found.filter((f) => !f.created).map((f) => f.user.id))];
  const locked = new Map(toLock.length
    ? (await User.findAll({ where: { id: { [Op.in]: toLock } }, transaction, lock: transaction.LOCK.SHARE })).map((u) => [u.id, u])
    : []);
  const ownerByAddress = new Map(addressed.map(({ input }, i) => [input, found[i].created ? found[i].user : locked.get(found[i].user.id)]));

  const people: People[] = [];
  for (const { input, brandId } of items) {
    const isOperator = (u: User) => u.type === 'operator';
    const isUserOfBrand = (u: User) => u.type === 'user' && u.brand_id === brandId;
    // Names that contradict each other are refused rather than one of them silently dropped.
    if (input.onBehalfOf !== undefined && input.internal) throw new ValidationError('The on behalf of field is prohibited when internal is 1.');
    if (input.onBehalfOf !== undefined && input.userEmail) throw new ValidationError('The on behalf of field prohibits user email from being present.');
    if (input.internal) {
      if (input.userId === undefined) throw new ValidationError('The user field is required when internal is 1.');
      const operator = await person(input.userId, 'user', transaction, isOperator);
      people.push({ owner: operator, author: operator });
    } else if (input.onBehalfOf !== undefined) {
      const owner = await person(input.onBehalfOf, 'on_behalf_of', transaction, isUserOfBrand);
      const author = input.userId !== undefined ? await person(input.userId, 'user', transaction, isOperator) : owner;
      people.push({ owner, author });
    } else if (input.userId !== undefined) {
      const owner = await person(input.userId, 'user', transaction, isUserOfBrand);
      people.push({ owner, author: owner });
    } else if (input.userEmail) {
      const owner = ownerByAddress.get(input);
      if (!owner) throw invalid('user_id');
      people.push({ owner, author: owner });
    } else {
      throw new ValidationError('The user email field is required when user is not present.');
    }
  }
  return people;
}
