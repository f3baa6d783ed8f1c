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

// The values of the first ARGV[2] keys, then the same count for each key after them, in one round
// trip (the start of an API request: its cache versions and its rate-limit counts). A missing
// value is Lua's false, which Redis answers as nil.
const READ_AND_COUNT = `local reads = tonumber(ARGV[2])
local out = {}
for i = 1, reads do
  out[i] = redis.call('GET', KEYS[i])
end
for i = reads + 1, #KEYS do
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
  readAndCount(numberOfKeys: number, ...args: Array<string | number>): Promise<Array<string | number | null>>;
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

/** What readAndCount answers: the values read (null: a key has none), and a count per key; each null when Redis did not answer. */
export interface ReadAndCounted {
  read: Promise<{ values: Array<string | null> } | null>;
  counts: Array<Promise<{ count: number; resetsIn: number } | null>>;
}

/**
 * In one command (one script, atomic): the values of `readKeys` (null when a key has none) and,
 * for each of `keys`, what countInWindow(key, windowSeconds) counts, where countInWindow would
 * send a command per key and a GET per read besides. Every key is below QUEUE_PREFIX. Undefined
 * when it cannot be one command: Redis not connected now (the caller reads and counts the usual
 * way, which decides whether to wait or give up), or a cluster (the keys are in different slots).
 * When Redis fails to answer, the values and every count are null, as countInWindow's would be.
 */
export function readAndCount(readKeys: string[], keys: string[], windowSeconds: number): ReadAndCounted | undefined {
  const cfg = config();
  if (cfg.redis.kind === 'cluster') return undefined;
  client = counterClient();
  if (client.status !== 'ready') return undefined;
  const prefix = cfg.queuePrefix;
  const all = [...readKeys, ...keys].map((k) => `${prefix}:${k}`);
  const reply = (client as CountingClient).readAndCount(all.length, ...all, windowSeconds, readKeys.length).then(
    (r) => {
      warned = false;
      return r;
    },
    unavailable,
  );
  return {
    read: reply.then((r) => (r ? { values: readKeys.map((_k, i) => (r[i] as string | null) ?? null) } : null)),
    counts: keys.map((_k, i) => reply.then((r) => {
      const at = readKeys.length + 2 * i;
      return r ? { count: Number(r[at]), resetsIn: Number(r[at + 1]) } : null;
    })),
  };
}

/** Closes the counters' Redis connection (at shutdown; the next command opens a new one). */
export function closeCounters(): void {
  client?.disconnect();
  client = undefined;
}
