import { isIP } from 'node:net';
import { normaliseIp } from '../lib/ip';
import type { Filter } from '../http/listQuery';
import { field } from '../lib/validation';

/**
 * The `ip` list filter of bans and whitelist entries: an exact-match string filter (the spec's),
 * so a value that is no single address (`198.51.100`, a range) finds nothing rather than being
 * refused. An address is normalised as stored addresses are, so any spelling of it matches.
 */
export const ipFilter = (column = 'ip'): Filter => ({
  schema: field.string(255).custom((v: string) => (isIP(v) && !v.includes('%') ? normaliseIp(v) : v)),
  where: (v: string) => ({ [column]: v }),
});
