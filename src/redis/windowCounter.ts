import { config } from '../config';
import { logger } from '../logger';
import { redisConnection, type RedisClient } from './connection';

// One round trip, atomic: the first event of a window sets its expiry, so the window is fixed
// (it starts with the first event) and a key can never be left without one.
const COUNT = `local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('TTL', KEYS[1])
if ttl < 0 then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}`;

let client: RedisClient | undefined;
let warned = false;

/**
 * The process's connection for short commands that must never make a request wait long (counters,
 * Idempotency-Key locks, the readiness check): it gives up within half a second.
 */
export function counterClient(): RedisClient {
  if (!client) {
    client = redisConnection('counter');
    // EVALSHA of a script loaded once (ioredis loads it again after a NOSCRIPT), not its text on
    // every request.
    client.defineCommand('countInWindow', { numberOfKeys: 1, lua: COUNT });
  }
  return client;
}

type CountingClient = RedisClient & { countInWindow(key: string, windowSeconds: number): Promise<[number, number]> };

/**
 * Counts one event under `key` (below QUEUE_PREFIX, so every web process shares the count) in a
 * window of `windowSeconds` that starts with its first event. Returns the count so far and the
 * seconds until the window ends, or null when Redis cannot answer: counting is a defence, not a
 * gate, so callers then let the request through. An outage is logged once, when it is first seen.
 */
export async function countInWindow(key: string, windowSeconds: number): Promise<{ count: number; resetsIn: number } | null> {
  client = counterClient();
  // During an outage already reported, requests do not wait for a command to time out.
  if (warned && client.status !== 'ready') return null;
  try {
    const [count, resetsIn] = await (client as CountingClient).countInWindow(`${config().queuePrefix}:${key}`, windowSeconds);
    warned = false;
    return { count, resetsIn };
  } catch (err) {
    if (!warned) {
      warned = true;
      logger.warn({ err: { message: (err as Error).message } }, 'Redis unavailable: failed logins and verification attempts are not counted until it answers again');
    }
    return null;
  }
}

/** Closes the counters' Redis connection (at shutdown; the next command opens a new one). */
export function closeCounters(): void {
  client?.disconnect();
  client = undefined;
}
