import { Op, type Transaction } from 'sequelize';
import { UserEmail } from '../db/models';
import { select } from '../db/select';
import { ValidationError } from '../errors';
import { channelByName } from './channelByName';
import { cachedValue, configVersion } from './configCache';

/** Where a ticket or a message came from: the `channels` row of that name. */
export type ChannelName = 'web' | 'email' | 'api';

/** The id of a channel by name (`api` is the channel of everything posted through the API). */
export async function channelIdOf(name: ChannelName, transaction?: Transaction): Promise<number> {
  // Kept under the config version (channels change through the models only, and rarely).
  const id = await cachedValue(`channel-id:${name}`, await configVersion(), async (t) => (await channelByName(name, t))?.id ?? null, transaction);
  if (id === null) throw new Error(`The channel "${name}" does not exist: run the seed`);
  return id;
}

/** CC addresses as stored: trimmed, lower case, each once, in the order given. */
export function normaliseCc(addresses: readonly string[] | null | undefined): string[] {
  const out: string[] = [];
  for (const raw of addresses ?? []) {
    const a = String(raw).trim().toLowerCase();
    if (a && !out.includes(a)) out.push(a);
  }
  return out;
}

/**
 * A ticket's CC addresses as stored (normaliseCc) without its own user's addresses (`own`, from
 * ownAddresses: the main one and the additional ones): the ticket's user gets its mail as its
 * user, once, and is never on its CC list (docs/mail.md). Dropped, not refused. The one rule of
 * the API (create, update, messages, merge) and the mailbox worker (through them).
 */
export function ccWithoutUser(addresses: readonly string[] | null | undefined, own: readonly string[]): string[] {
  return normaliseCc(addresses).filter((a) => !own.includes(a));
}

/**
 * Whether any of `addresses` is one of the user's (the main one or an additional one, compared
 * as the columns' collation compares: whatever the case), in one statement.
 */
export async function hasAddressAmong(userId: number, addresses: readonly string[], transaction?: Transaction): Promise<boolean> {
  const wanted = normaliseCc(addresses);
  if (!wanted.length) return false;
  const rows = await select(
    `SELECT 1 AS hit FROM users WHERE id = :userId AND email IN (:wanted)
     UNION ALL SELECT 1 FROM user_emails WHERE user_id = :userId AND email IN (:wanted) LIMIT 1`,
    { userId, wanted }, { transaction },
  );
  return rows.length > 0;
}

/**
 * Each user's addresses, lower case: the main one, then the additional ones (one query for all,
 * none when `needed` is false: nothing to compare them with).
 */
export async function ownAddresses(users: ReadonlyArray<{ id: number; email: string }>, transaction?: Transaction, needed = true): Promise<Map<number, string[]>> {
  const out = new Map(users.map((u) => [u.id, [u.email.trim().toLowerCase()]]));
  if (!needed || !users.length) return out;
  const extra = await UserEmail.findAll({ attributes: ['user_id', 'email'], where: { user_id: { [Op.in]: [...out.keys()] } }, order: [['id', 'ASC']], transaction });
  for (const e of extra) out.get(e.user_id)?.push(e.email.trim().toLowerCase());
  return out;
}

/** One user's addresses (ownAddresses); none for no user. */
export const addressesOf = async (user: { id: number; email: string } | null | undefined, transaction: Transaction): Promise<string[]> =>
  (user ? (await ownAddresses([user], transaction)).get(user.id)! : []);

/** A stored JSON array of strings (cc columns); [] for none or an unreadable value. */
export function jsonList(stored: string | null | undefined): string[] {
  if (!stored) return [];
  try {
    const v = JSON.parse(stored);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/** A `created_at` given by the caller: a moment that has happened. */
export function assertPast(createdAt: number | undefined, now: number): void {
  if (createdAt !== undefined && createdAt > now + 60) throw new ValidationError('The created at must be a date before or equal to now.');
}
