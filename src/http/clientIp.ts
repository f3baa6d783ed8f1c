import type { Request } from 'express';
import { normaliseIp } from '../lib/ip';

/** The caller's address, spelt as bans store it. */
export function clientIp(req: Request): string {
  return normaliseIp(req.ip ?? req.socket.remoteAddress ?? '');
}
