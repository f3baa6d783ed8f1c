import IORedis, { type RedisOptions } from 'ioredis';
import { config } from '../config';

/**
 * Workers wait for Redis forever (BullMQ requires `maxRetriesPerRequest: null`). A producer's
 * commands fail after one reconnection attempt while Redis is away (about two seconds), and the
 * outbox keeps the side effect until a sweep publishes it; requests never wait on Redis.
 */
export function redisConnection(role: 'worker' | 'producer'): IORedis {
  const options: RedisOptions = role === 'worker'
    ? { maxRetriesPerRequest: null }
    : { maxRetriesPerRequest: 1, connectTimeout: 2000, retryStrategy: (n) => Math.min(n * 200, 2000) };
  const client = new IORedis(config().redisUrl, { ...options, lazyConnect: false });
  client.on('error', () => { /* reported by the command that fails; reconnects on its own */ });
  return client;
}
