import { AsyncLocalStorage } from 'node:async_hooks';
import type { Model, ModelStatic, Transaction } from 'sequelize';
import { config } from '../config';
import { counterClient } from '../redis/windowCounter';
import { readsFromPrimary } from './readRouting';
import { afterOutermostCommit } from './transaction';

/**
 * Per-process caches that every web process invalidates at once. A cache's entries are tagged
 * with a **version**, a counter in Redis (`<QUEUE_PREFIX>:<name>`) that every change of the
 * watched models bumps once it is committed, in whichever process made it. A reader gets the
 * version (a GET, once per request: VersionSnapshot) before the database and uses an entry only
 * if it was stored under that same version, so a change applies to the very next request
 * everywhere; an entry stored while a change commits carries the old version and is ignored by
 * the next reader. When Redis is not ready nothing is cached (every read asks the database, as
 * without a cache). A change that bypasses the models (SQL by hand) is seen at the latest after
 * ENTRY_TTL_MS.
 */
export const ENTRY_TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;

interface Entry<T> { version: string; at: number; value: T }

export class VersionedCache<T> {
  private readonly entries = new Map<string, Entry<T>>();

  get(k: string, version: string): T | undefined {
    const e = this.entries.get(k);
    if (!e) return undefined;
    if (e.version !== version || Date.now() - e.at > ENTRY_TTL_MS) {
      this.entries.delete(k);
      return undefined;
    }
    return e.value;
  }

  set(k: string, version: string, value: T): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(k, { version, at: Date.now(), value });
  }

  clear(): void {
    this.entries.clear();
  }
}

// The counters' connection: short commands that give up quickly (redis/windowCounter.ts).
const redis = counterClient;

/**
 * The versions one request uses, by name: each is read once, when the request starts (with its
 * rate-limit counts, in one command: http/rateLimit.ts startAccessChecks) or when first needed,
 * and every cache consulted during the request uses that reading. A write of several records
 * consulted the definitions up to five times, a Redis round trip each. A version the request
 * bumps itself is its new value from then on, so the request never reads back what it changed
 * from an entry kept before its change.
 */
export type VersionSnapshot = Map<string, Promise<string | null>>;

const snapshots = new AsyncLocalStorage<VersionSnapshot>();
const names: string[] = [];

/** Runs `work` (and everything it awaits) with `snapshot` as the versions its caches use. */
export const withVersionSnapshot = <T>(snapshot: VersionSnapshot, work: () => T): T => snapshots.run(snapshot, work);

/** The names of every version (their keys below QUEUE_PREFIX), for a request to read them at its start. */
export const versionNames = (): readonly string[] => names;

/**
 * A snapshot whose versions are a reading of versionNames() made along with other commands, as
 * current() reads each: its value (none: never bumped, version 0), or null for all when Redis did
 * not answer.
 */
export function snapshotOf(read: Promise<{ values: Array<string | null> } | null>, readNames: readonly string[]): VersionSnapshot {
  return new Map(readNames.map((name, i) => [name, read.then((r) => (r ? r.values[i] ?? '0' : null))]));
}

export interface CacheVersion {
  /**
   * The current version, or null when Redis cannot say at once (then nothing is cached): the
   * request's (`snapshot`, by default the one work runs with: withVersionSnapshot), read once per
   * snapshot, or a reading of its own outside any.
   */
  current(snapshot?: VersionSnapshot): Promise<string | null>;
  /** Makes every process's entries stale (this process's at once). */
  bump(): Promise<void>;
  /**
   * Bumps after every create, update and delete of the models (single or bulk), after the commit
   * when there is a transaction (a bump before it would let a reader cache the state about to change).
   */
  watch(models: Array<ModelStatic<Model>>): void;
}

/** A version counter named `name` in Redis; `clearLocal` empties this process's caches of it. */
export function cacheVersion(name: string, clearLocal: () => void): CacheVersion {
  const key = () => `${config().queuePrefix}:${name}`;
  const read = async () => {
    const c = redis();
    if (c.status !== 'ready') return null;
    try {
      return (await c.get(key())) ?? '0';
    } catch {
      return null;
    }
  };
  names.push(name);
  const version: CacheVersion = {
    current(snapshot = snapshots.getStore()) {
      if (!snapshot) return read();
      let v = snapshot.get(name);
      if (!v) snapshot.set(name, (v = read()));
      return v;
    },
    async bump() {
      clearLocal();
      // Redis is away: processes bypass their caches while it is (current() is null).
      const bumped = redis().incr(key()).then(String, () => null);
      snapshots.getStore()?.set(name, bumped);
      await bumped;
    },
    watch(models) {
      const bump = (options?: { transaction?: Transaction | null }) => {
        if (!options?.transaction) return version.bump();
        afterOutermostCommit(options.transaction, () => version.bump());
        return undefined;
      };
      for (const model of models) {
        for (const hook of ['afterCreate', 'afterUpdate', 'afterDestroy', 'afterUpsert'] as const) {
          model.addHook(hook, (_instance: unknown, options: any) => bump(options));
        }
        for (const hook of ['afterBulkCreate', 'afterBulkUpdate', 'afterBulkDestroy'] as const) {
          model.addHook(hook, (...args: any[]) => bump(args[args.length - 1]));
        }
      }
    },
  };
  return version;
}

/**
 * Values read from the committed state, kept per process under a version of their own that
 * `watch`ed models bump: for configuration and definitions that requests consult on every call and
 * that change through the API only (the config cache, db/definitions.ts). A change bumps the version after its commit, and the
 * next request everywhere reads afresh.
 *
 * Inside a transaction a miss is read in the transaction (its snapshot may predate the version, and
 * it may have changed a definition itself: that read is not kept), and the value is read again
 * outside it, not awaited, to be kept: a transaction never waits for a second connection of the
 * pool while it holds one (all of them could be waiting).
 */
export class VersionedValues<T> {
  /** The entries (for callers that read a version once for many keys). */
  readonly kept = new VersionedCache<T>();
  /** The reads outside a transaction in flight, by key (one at a time per key). */
  private readonly refreshing = new Map<string, Promise<unknown>>();
  readonly version: CacheVersion;

  constructor(name: string) {
    this.version = cacheVersion(name, () => this.kept.clear());
  }

  async get<V extends T>(key: string, load: (transaction?: Transaction) => Promise<V>, transaction?: Transaction): Promise<V> {
    return this.at(key, await this.version.current(), load, transaction);
  }

  /** `get` under a version the caller read (`current()`), once for all the keys of its request. */
  async at<V extends T>(key: string, v: string | null, load: (transaction?: Transaction) => Promise<V>, transaction?: Transaction): Promise<V> {
    const hit = v === null ? undefined : (this.kept.get(key, v) as V | undefined);
    if (hit !== undefined) return hit;
    if (!transaction) return this.keep(key, v, load);
    if (v !== null && !this.refreshing.has(key)) {
      this.refreshing.set(key, this.keep(key, v, load).catch(() => undefined).finally(() => this.refreshing.delete(key)));
    }
    return load(transaction);
  }

  /** Resolves once the reads started outside transactions so far are kept (tests measure warm). */
  async settled(): Promise<void> {
    await Promise.all(this.refreshing.values());
  }

  private async keep<V extends T>(key: string, v: string | null, load: () => Promise<V>): Promise<V> {
    const value = await readsFromPrimary(load);
    if (v !== null) this.kept.set(key, v, value);
    return value;
  }
}
