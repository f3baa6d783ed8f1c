/**
 * Small helpers shared by the Core-area tests (not a test file itself).
 *
 * Addresses: the files run by one jest worker share a database, so an IP ban left by one file would
 * refuse the requests of a later file that poses as the same client. The addresses here are unique
 * to this test file: IPv4 from a /24 picked by the file's load time (files of one worker load at
 * least tens of milliseconds apart), IPv6 from a ULA block named by pid and load time.
 */
import { nowSec } from '../helpers/app';

const loadedAt = Date.now();
const net24 = Math.floor(loadedAt / 16) & 0xffff;
const v4net = `10.${net24 >> 8}.${net24 & 0xff}`;
let v4host = 0;

/** An IPv4 address no other test file uses (at most 254 per file). */
export function uniqueIpv4(): string {
  v4host++;
  if (v4host > 254) throw new Error('uniqueIpv4: this file used up its /24');
  return `${v4net}.${v4host}`;
}

const hex = (n: number) => (n & 0xffff).toString(16);
const v6base = `fd00:${hex(process.pid)}:${hex(Math.floor(loadedAt / 2 ** 32))}:${hex(loadedAt / 2 ** 16)}:${hex(loadedAt)}`;
let v6block = 0;

/** Seven groups of an IPv6 address unique to this call: append `:<hex>` to make an address. */
export function ipv6Block(): string {
  v6block++;
  return `${v6base}:${hex(v6block)}:0`;
}

/** An IPv6 address no other test file uses. */
export const uniqueIpv6 = (): string => `${ipv6Block()}:1`;

/** created_at/updated_at are integer UNIX seconds within [from, to]. */
export function expectTimestamps(record: Record<string, unknown>, from: number, to: number = nowSec()): void {
  for (const k of ['created_at', 'updated_at']) {
    const v = record[k];
    expect(Number.isInteger(v)).toBe(true);
    expect(v as number).toBeGreaterThanOrEqual(from);
    expect(v as number).toBeLessThanOrEqual(to);
  }
}
