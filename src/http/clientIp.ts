import type { Request } from 'express';
import { normaliseIp } from '../lib/ip';

const IP = Symbol('clientIp');

/**
 * The caller's address, spelt as bans store it. Worked out once per request (the ban check and
 * both rate limits ask for it; `req.ip` walks the proxy chain on every read): nothing a request's
 * handlers do changes its socket or its X-Forwarded-For.
 */
export function clientIp(req: Request): string {
  const held = req as Request & { [IP]?: string };
  return (held[IP] ??= normaliseIp(req.ip ?? req.socket.remoteAddress ?? ''));
}
