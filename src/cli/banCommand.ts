import { isIP } from 'node:net';
import { IpBan } from '../db/models';
import { now } from '../db/entity';
import { normaliseIp } from '../lib/ip';
import type { Io } from './args';

export const BAN_USAGE = `usage:
  npm run --silent ban -- list [IP]          lists IP bans (all, or those of one address): id, ip,
                                             where each applies, when it ends, reason
  npm run --silent ban -- delete ID|IP       lifts a ban by its id, or every ban of an address;
                                             every web process lets the address in at its next request
      An automatic ban (LOGIN_FAILURES_MAX wrong tokens within LOGIN_FAILURES_WINDOW_SECONDS) comes
      back at the next failure within that window: deleting it does not reset the count.
`;

const EVENTS = ['api', 'user', 'operator'] as const;

const when = (t: number) => new Date(t * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Where a ban applies (`api,user`), and when it ends (`never`, or the time, `(expired)` once past). */
const eventsOf = (b: IpBan) => EVENTS.filter((e) => b[`event_${e}`] === 1).join(',') || '-';
const endOf = (b: IpBan) => {
  if (b.type === 1 || b.expiry === null) return 'never';
  return `${when(b.expiry)}${b.expiry <= now() ? ' (expired)' : ''}`;
};
/** One line per ban: a reason's tabs and line breaks become spaces. */
const oneLine = (text: string | null) => (text ?? '').replace(/\s+/g, ' ').trim() || '-';

/** An address as the API stores it (normalised), or null when `text` is not one. */
const addressOf = (text: string) => (isIP(text.trim()) && !text.includes('%') ? normaliseIp(text) : null);

/**
 * `ban list|delete`; returns the exit code. The database must be prepared. A delete goes through
 * the IpBan model, as `DELETE /api/core/ipban/{id}` does: its hooks bump the ban version once
 * the row is gone, so every web process drops its cached ban answers (auth/accessCache.ts).
 */
export async function banCommand(argv: string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'list') {
    const ip = rest[0] === undefined ? undefined : addressOf(rest[0]);
    if (ip === null) {
      io.err(`ban list: not an IP address: ${rest[0]}\n`);
      return 2;
    }
    const bans = await IpBan.findAll({ where: ip ? { ip } : {}, order: [['id', 'ASC']] });
    io.out('id\tip\tapplies to\tends\treason\n');
    for (const b of bans) io.out(`${b.id}\t${b.ip}\t${eventsOf(b)}\t${endOf(b)}\t${oneLine(b.reason)}\n`);
    return 0;
  }
  if (command === 'delete') {
    const target = rest[0]?.trim() ?? '';
    const ip = /^\d{1,10}$/.test(target) ? null : addressOf(target);
    if (!/^\d{1,10}$/.test(target) && !ip) {
      io.err('ban delete needs a ban id or an IP address\n');
      return 2;
    }
    const bans = await IpBan.findAll({ where: ip ? { ip } : { id: Number(target) } });
    // One by one, as the API deletes (no transaction: each delete's hook has bumped the access
    // version when it returns, before this process closes its connections).
    for (const b of bans) await b.destroy();
    const n = bans.length;
    io.out(`Deleted ${n} ban${n === 1 ? '' : 's'}${n ? ` (${[...new Set(bans.map((b) => b.ip))].join(', ')})` : ''}.\n`);
    return n ? 0 : 1;
  }
  io.err(BAN_USAGE);
  return 2;
}
