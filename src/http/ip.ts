import { isIPv6 } from 'node:net';

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
