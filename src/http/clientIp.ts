import type { Request } from 'express';

/** The caller's address as bans store it: IPv4-mapped IPv6 (::ffff:1.2.3.4) reads as IPv4. */
export function clientIp(req: Request): string {
  const ip = req.ip ?? req.socket.remoteAddress ?? '';
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}
