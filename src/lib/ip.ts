import { isIP, isIPv6 } from 'node:net';
import { Joi } from './validation';

/**
 * One spelling per address, so a ban matches however it was typed: IPv4-mapped IPv6
 * (::ffff:1.2.3.4) reads as IPv4, and IPv6 is lower case with zeros compressed (RFC 5952).
 */
export function normaliseIp(ip: string): string {
  const trimmed = ip.trim();
  if (!isIPv6(trimmed)) return trimmed;
  const canonical = new URL(`http://[${trimmed}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (mapped) {
    const [hi, lo] = [parseInt(mapped[1], 16), parseInt(mapped[2], 16)];
    return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
  }
  return canonical;
}

/**
 * A single address (no range), normalised. joi alone takes octets with leading zeros
 * (`010.1.1.1`), which some software reads as octal (8.1.1.1) and some as decimal: such an
 * address, or an IPv6 zone (`fe80::1%eth0`), is refused rather than guessed, by also requiring
 * what Node itself accepts as an address.
 */
export const ipAddress = () => Joi.string().trim().ip({ cidr: 'forbidden' })
  .custom((v: string, helpers) => (isIP(v) && !v.includes('%') ? normaliseIp(v) : helpers.error('string.ip')));
