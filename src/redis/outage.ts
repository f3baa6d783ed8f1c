import type { EventEmitter } from 'node:events';
import { config } from '../config';
import { logger } from '../logger';
import { isConnectionError, redisProblem, withoutPassword } from '../lib/serviceErrors';
import { redisWhere } from './topology';

/**
 * One line when this process loses Redis and one when it has it back, however many connections
 * and retries there are in between (each connection retries every few hundred milliseconds, and
 * BullMQ reports every failed attempt: hundreds of lines a minute otherwise).
 */
let downSince: number | null = null;

export const redisIsDown = () => downSince !== null;

/** Reports a connection failure; true when `err` was one (the caller need not log it). */
export function noteRedisError(err: unknown, url = config().redisUrl): boolean {
  if (!isConnectionError(err)) return false;
  if (downSince === null) {
    downSince = Date.now();
    logger.error({ problem: redisProblem(err, url, url === config().redisUrl ? redisWhere() : undefined) }, 'Redis is unreachable; retrying until it answers');
  }
  return true;
}

export function noteRedisReady(url = config().redisUrl): void {
  if (downSince === null) return;
  const downSeconds = Math.round((Date.now() - downSince) / 1000);
  downSince = null;
  logger.info({ redis: url === config().redisUrl ? redisWhere().where : withoutPassword(url), downSeconds }, 'Redis answers again');
}

/** Watches a connection: its errors and reconnections go through the two functions above. */
export function watchRedis(client: EventEmitter, url = config().redisUrl): void {
  client.on('error', (err) => { noteRedisError(err, url); });
  client.on('ready', () => noteRedisReady(url));
}
