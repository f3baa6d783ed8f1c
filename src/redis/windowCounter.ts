import { config } from '../config';
import { logger } from '../logger';
import { redisConnection, type RedisClient } from './connection';

// One key's count in a Lua script, atomic: the first event of a window sets its expiry, so the
// window is fixed (it starts with the first event) and a key can never be left without one.
const countKey = (key: string) => `local n = redis.call('INCR', ${key})
  local ttl = redis.call('TTL', ${key})
  if ttl < 0 then
    redis.call('EXPIRE', ${key}, ARGV[1])
    ttl = tonumber(ARGV[1])
  end`;

// One round trip: a count.
const COUNT = `do
  ${countKey('KEYS[1]')}
  return {n, ttl}
end`;

// The same count for each key after the first, with the first key's value read in the same round
// trip (the start of an API request: its access version and its rate-limit counts).
const READ_AND_COUNT = `local out = {redis.call('GET', KEYS[1])}
for i = 2, #KEYS do
  ${countKey('KEYS[i]')}
  out[#out + 1] = n
  out[#out + 1] = ttl
end
return out`;

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
    client.defineCommand('readAndCount', { lua: READ_AND_COUNT });
  }
  return client;
}

type CountingClient = RedisClient & {
  countInWindow(key: string, windowSeconds: number): Promise<[number, number]>;
  readAndCount(numberOfKeys: number, ...args: Array<string | number>): Promise<[string | null, ...number[]]>;
};

/** Redis's answer when it cannot answer (countInWindow): the caller lets the request through. */
function unavailable(err: unknown): null {
  if (!warned) {
    warned = true;
    logger.warn({ err: { message: (err as Error).message } }, 'Redis unavailable: failed logins and verification attempts are not counted until it answers again');
  }
  return null;
}

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
    return unavailable(err);
  }
}

/** What readAndCount answers: the value read (null: the key has none), and a count per key; each null when Redis did not answer. */
export interface ReadAndCounted {
  read: Promise<{ value: string | null } | null>;
  counts: Array<Promise<{ count: number; resetsIn: number } | null>>;
}

/**
 * In one command (one script, atomic): the value of `readKey` (null when it has none) and, for
 * each of `keys`, what countInWindow(key, windowSeconds) counts, where countInWindow would send a
 * command per key and a GET besides. Every key is below QUEUE_PREFIX. Undefined when it cannot be
 * one command: Redis not connected now (the caller reads and counts the usual way, which decides
 * whether to wait or give up), or a cluster (the keys are in different slots). When Redis fails
 * to answer, the value and every count are null, as countInWindow's would be.
 */
export function readAndCount(readKey: string, keys: string[], windowSeconds: number): ReadAndCounted | undefined {
  const cfg = config();
  if (cfg.redis.kind === 'cluster') return undefined;
  client = counterClient();
  if (client.status !== 'ready') return undefined;
  const prefix = cfg.queuePrefix;
  const reply = (client as CountingClient).readAndCount(1 + keys.length, `${prefix}:${readKey}`, ...keys.map((k) => `${prefix}:${k}`), windowSeconds).then(
    (r) => {
      warned = false;
      return r;
    },
    unavailable,
  );
  return {
    read: reply.then((r) => (r ? { value: r[0] ?? null } : null)),
    counts: keys.map((_k, i) => reply.then((r) => (r ? { count: Number(r[1 + 2 * i]), resetsIn: Number(r[2 + 2 * i]) } : null))),
  };
}

/** Closes the counters' Redis connection (at shutdown; the next command opens a new one). */
export function closeCounters(): void {
  client?.disconnect();
  client = undefined;
}
