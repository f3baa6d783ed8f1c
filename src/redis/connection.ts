import IORedis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';
import { config } from '../config';
import { watchRedis } from './outage';
import { FailoverSafeCluster } from './failoverSafeCluster';
import { FailoverSafeSentinelConnector } from './sentinelConnector';

/** A connection to this install's Redis: one server, the master Sentinels name, or a cluster. */
export type RedisClient = IORedis | Cluster;

/**
 * Workers wait for Redis forever (BullMQ requires `maxRetriesPerRequest: null`). A producer's
 * commands fail after one reconnection attempt while Redis is away (about two seconds), and the
 * outbox keeps the side effect until a sweep publishes it; requests never wait on Redis.
 * A counter (failed logins, throttles, cache versions) gives up within half a second: a request
 * that counts something goes on uncounted rather than wait.
 */
export function redisConnection(role: 'worker' | 'producer' | 'counter'): RedisClient {
  const retryStrategy = (n: number) => Math.min(n * 200, 2000);
  const options: RedisOptions = role === 'worker'
    ? { maxRetriesPerRequest: null }
    : role === 'producer'
      ? { maxRetriesPerRequest: 1, connectTimeout: 2000, retryStrategy }
      // Auto-pipelining: the commands that concurrent requests issue in one tick (cache
      // versions, rate-limit counts) leave in one write.
      : { maxRetriesPerRequest: 0, commandTimeout: 500, connectTimeout: 2000, retryStrategy, enableAutoPipelining: true };
  // On a cluster a command to a master that died is retried until its replica takes over (up to
  // 16 rounds, seconds), and no per-node commandTimeout bounds that: a counter's fails at once.
  const client = connect(options, role === 'counter' ? { retryDelayOnFailover: 0, retryDelayOnClusterDown: 0 } : {});
  // A lost connection is said once (and its return); a failing command is reported by its caller.
  watchRedis(client);
  return client;
}

/** A write refused by a master that a failover turned into a replica. */
const demoted = (err: Error) => err.message.startsWith('READONLY');

/**
 * The client of the configured topology. REDIS_URL still gives the user, password, database and
 * TLS; with Sentinels the master is asked of them at every (re)connection, with a cluster every
 * key goes to the node of its slot.
 */
function connect(options: RedisOptions, clusterOptions: ClusterOptions = {}): RedisClient {
  const c = config();
  if (c.redis.kind === 'single') return new IORedis(c.redisUrl, { ...options, lazyConnect: false });
  const url = new URL(c.redisUrl);
  const auth: RedisOptions = {
    username: decodeURIComponent(url.username) || undefined,
    password: decodeURIComponent(url.password) || undefined,
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
  if (c.redis.kind === 'sentinel') {
    return new IORedis({
      ...options, ...auth, db: Number(url.pathname.slice(1) || 0),
      sentinels: c.redis.sentinels, name: c.redis.name, sentinelPassword: c.redis.sentinelPassword || undefined,
      ...(url.protocol === 'rediss:' ? { enableTLSForSentinelMode: true } : {}),
      // The Sentinels announce a failover (+switch-master): reconnect to the new master at once
      // rather than when the old one's socket times out.
      failoverDetector: true,
      // ioredis's own connector can end the client when that announcement comes mid-reconnection.
      Connector: FailoverSafeSentinelConnector,
      // A connection still on a former master that came back as a replica: reconnect (to the
      // master the Sentinels name now) and send the command again.
      reconnectOnError: (err) => (demoted(err) ? 2 : false),
      lazyConnect: false,
    });
  }
  const { retryStrategy, enableAutoPipelining, ...redisOptions } = options;
  // ioredis's own can leave a connect() unsettled, or a disconnected client not ended, after a
  // failover, and a BullMQ worker then waits for ever (failoverSafeCluster.ts).
  return new FailoverSafeCluster(c.redis.nodes, {
    redisOptions: { ...redisOptions, ...auth },
    clusterRetryStrategy: retryStrategy ?? ((n: number) => Math.min(n * 100, 2000)),
    enableAutoPipelining,
    lazyConnect: false,
    ...clusterOptions,
  });
}
