import type { Model, ModelStatic, Transaction } from 'sequelize';
import { VersionedValues } from '../db/versionedCache';
import { readsFromPrimary } from '../db/readRouting';

/**
 * The configuration records every ticket read embeds (departments, channels, statuses, tags,
 * priorities, SLA plans, the brands' addresses and the ticket settings), kept presented (in each
 * `lang`) per process, under the **config version** (db/versionedCache.ts), which every change
 * of those tables or of translations made through the models bumps once it is committed. They
 * change rarely and are read by every ticket request: from the cache a ticket list or show runs
 * its own statements only, and a change is seen by the very next request in every web process.
 */
const values = new VersionedValues<unknown>('config-version');
const presented = values.kept;
const version = values.version;

/** The current config version, or null when Redis cannot say at once (then nothing is cached). */
export const configVersion = () => version.current();

/** Resolves once the reads a miss in a transaction started are kept (VersionedValues.settled). */
export const configCacheSettled = () => values.settled();

/** Makes every process's kept presentations stale, as a change of a configuration table does. */
export const bumpConfigVersion = () => version.bump();

export const watchConfigTables = (models: Array<ModelStatic<Model>>) => version.watch(models);

/**
 * The presentations of `ids` (null ids left out) in `lang`: those kept under version `v`, and the
 * rest from `load` (one statement per kind whatever the page), which are then kept.
 */
export async function cachedPresentations<T>(
  kind: string, ids: Array<number | null | undefined>, lang: string | undefined, v: string | null,
  load: (missing: number[]) => Promise<Map<number, T>>,
): Promise<Map<number, T>> {
  const key = (id: number) => `${kind}:${lang ?? ''}:${id}`;
  const out = new Map<number, T>();
  const missing: number[] = [];
  for (const id of new Set(ids)) {
    if (id === null || id === undefined) continue;
    const hit = v === null ? undefined : (presented.get(key(id), v) as T | undefined);
    if (hit === undefined) missing.push(id);
    else out.set(id, hit);
  }
  if (!missing.length) return out;
  // What is kept under version v must be v's state: a lagging replica could still hold the one before.
  for (const [id, value] of await readsFromPrimary(() => load(missing))) {
    out.set(id, value);
    if (v !== null) presented.set(key(id), v, value);
  }
  return out;
}

/**
 * One value (the ticket settings, a channel's id), kept under version `v` like the presentations.
 * In a transaction a miss is read in it and not kept (db/versionedCache.ts, VersionedValues).
 */
export function cachedValue<T>(key: string, v: string | null, load: (transaction?: Transaction) => Promise<T>, transaction?: Transaction): Promise<T> {
  return values.at(key, v, load, transaction);
}
