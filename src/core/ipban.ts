import { IpBan } from '../db/models';
import { now } from '../db/entity';
import { insertRows } from '../db/insertRows';
import { ValidationError } from '../errors';
import { ipAddress } from '../lib/ip';
import { flagFilter } from '../http/listQuery';
import { ipFilter } from './ipFilter';
import { resourceRouter, Written, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';
import { Joi, field } from '../lib/validation';

/** A temporary ban without `expiry_time` lasts this long. */
export const DEFAULT_BAN_SECONDS = 24 * 3600;

const events = { event_user: field.flag(), event_operator: field.flag(), event_api: field.flag() };

/**
 * The expiry a ban ends up with: none for a permanent ban, the given time or 24 hours for a
 * temporary one. `since` is when the 24 hours start (creation, or the update that makes it temporary).
 */
function expiryOf(type: number, expiryTime: number | undefined, current: number | null, since: number): number | null {
  if (type === 1) {
    if (expiryTime !== undefined && expiryTime !== null) throw new ValidationError('The expiry time can only be set for a temporary ban.');
    return null;
  }
  if (expiryTime !== undefined && expiryTime !== null) {
    if (expiryTime <= now()) throw new ValidationError('The expiry time must be a time in the future.');
    return expiryTime;
  }
  return current ?? since + DEFAULT_BAN_SECONDS;
}

/** The fields of every response (the OpenAPI document describes the same list). */
export const IPBAN_FIELDS = ['id', 'ip', 'reason', 'event_user', 'event_operator', 'event_api', 'type', 'expiry', 'created_at', 'updated_at'] as const;

export const ipBanResource: ResourceDef<IpBan, void, undefined> = {
  path: '/ipban',
  model: IpBan,
  label: 'ban',
  sortable: ['ip', 'type', 'expiry', 'created_at', 'updated_at'],
  filters: { ip: ipFilter(), type: flagFilter('type') },
  // Bans grow with the attacks they stop (migration 079).
  counted: { kind: 'ipban', byValue: ['type'] },
  createSchema: Joi.object({
    ip: ipAddress().required(),
    reason: field.multiline(65535),
    type: field.flag().required(),
    event_user: field.flag().default(1),
    event_operator: field.flag().default(1),
    event_api: field.flag().default(1),
    expiry_time: field.timestamp().allow(null),
  }),
  updateSchema: Joi.object({ ip: ipAddress(), reason: field.multiline(65535), type: field.flag(), ...events, expiry_time: field.timestamp().allow(null) }),
  async create(input, { transaction }) {
    const { expiry_time: expiryTime, ...values } = input;
    // One INSERT ... RETURNING the row as stored: nothing to read back (the access cache learns of it by its hook).
    const [ban] = await insertRows(IpBan, [{ ...values, expiry: expiryOf(values.type, expiryTime, null, now()) }], transaction, { stored: true });
    return new Written(ban, undefined);
  },
  async update(ban, input, { transaction }) {
    const { expiry_time: expiryTime, ...values } = input;
    const type = values.type ?? ban.type;
    const current = type === ban.type ? ban.expiry : null;
    await ban.update({ ...values, expiry: expiryOf(type, expiryTime, current, now()) }, { transaction });
  },
  serialize: (b) => pick(b, IPBAN_FIELDS),
};

export const ipBanRouter = resourceRouter(ipBanResource);
