import type { EventEmitter } from 'node:events';
import { logger } from '../logger';
import { isConnectionError, redisProblem } from '../lib/serviceErrors';
import { redisWhere } from './topology';

/**
 * One line when this process loses Redis and one when it has it back, however many connections
 * and retries there are in between (each connection retries every few hundred milliseconds, and
 * BullMQ reports every failed attempt: hundreds of lines a minute otherwise).
 */
let downSince: number | null = null;

export const redisIsDown = () => downSince !== null;

/** Reports a connection failure; true when `err` was one (the caller need not log it). */
export function noteRedisError(err: unknown): boolean {
  if (!isConnectionError(err)) return false;
  if (downSince === null) {
    downSince = Date.now();
    logger.error({ problem: redisProblem(err, redisWhere()) }, 'Redis is unreachable; retrying until it answers');
  }
  return true;
}

export function noteRedisReady(): void {
  if (downSince === null) return;
  const downSeconds = Math.round((Date.now() - downSince) / 1000);
  downSince = null;
  logger.info({ redis: redisWhere().where, downSeconds }, 'Redis answers again');
}

/** Watches a connection: its errors and reconnections go through the two functions above. */
export function watchRedis(client: EventEmitter): void {
  client.on('error', (err) => { noteRedisError(err); });
  client.on('ready', () => noteRedisReady());
}
