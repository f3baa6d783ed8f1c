import IORedis, { type RedisOptions } from 'ioredis';
import { config } from '../config';
import { watchRedis } from './outage';

/**
 * Workers wait for Redis forever (BullMQ requires `maxRetriesPerRequest: null`). A producer's
 * commands fail after one reconnection attempt while Redis is away (about two seconds), and the
 * outbox keeps the side effect until a sweep publishes it; requests never wait on Redis.
 * A counter (failed logins, throttles, cache versions) gives up within half a second: a request
 * that counts something goes on uncounted rather than wait.
 */
export function redisConnection(role: 'worker' | 'producer' | 'counter'): IORedis {
  const retryStrategy = (n: number) => Math.min(n * 200, 2000);
  const options: RedisOptions = role === 'worker'
    ? { maxRetriesPerRequest: null }
    : role === 'producer'
      ? { maxRetriesPerRequest: 1, connectTimeout: 2000, retryStrategy }
      // Auto-pipelining: the commands that concurrent requests issue in one tick (cache
      // versions, rate-limit counts) leave in one write.
      : { maxRetriesPerRequest: 0, commandTimeout: 500, connectTimeout: 2000, retryStrategy, enableAutoPipelining: true };
  const client = new IORedis(config().redisUrl, { ...options, lazyConnect: false });
  // A lost connection is said once (and its return); a failing command is reported by its caller.
  watchRedis(client);
  return client;
}
