import { Op, type Transaction, type WhereOptions } from 'sequelize';
import type { ModelCtor } from 'sequelize-typescript';
import { config } from '../config';
import { now, type Entity } from '../db/entity';
import { loadWhere } from '../db/load';
import { select } from '../db/select';
import { isBound, type BoundCondition } from '../db/sql';
import { readUncommitted } from '../db/transaction';
import type { ExportResource } from './tombstones';

/**
 * The change stream of a resource, read by the incremental export (./feed.ts) and by the search
 * server's index (src/ticket/tickets/search/groongaIndex.ts): live records in `(updated_at, id)`
 * order and tombstones in `(deleted_at, id)` order, merged into one stream ordered by (time, kind,
 * id), kind 0 a record and 1 a tombstone. The cursor is the position of the last item read. Only
 * rows changed up to `exportSettleSeconds` ago are read (the horizon), and a page stops before any
 * item of its span that a transaction still open has written (heldBack): a transaction that
 * stamped a row with second T and commits late, however late, has committed before a reader
 * passes T, so no reader passes a row it has not seen yet. Each side is one keyset range over an
 * index; no count. A stream narrowed by a condition reads a bounded span a page (spanEnd). All of
 * it is read on the primary (the export's readsFromPrimary; a housekeeping job, as the index's,
 * reads there): open transactions are the primary's, and a replica may not have applied yet what
 * the primary has committed.
 *
 * Tombstones are kept for `exportTombstoneRetentionSeconds` (./prune.ts). A reader needs the
 * tombstones of the records it copied that were deleted since: those from the time its copy began
 * (`s`, carried unchanged from cursor to cursor: the first page's time, or `start_time`) or from
 * its position, whichever is later. When that is older than the retention, some may be gone: its
 * cursor has expired and it must start again from the beginning (a fresh copy needs no tombstone).
 */
export interface Position {
  /** Seconds: the row's updated_at or deleted_at. */
  t: number;
  /** 0 a record, 1 a tombstone. */
  k: 0 | 1;
  /** The record's id, or the tombstone's row id. */
  id: number;
  /** Seconds: when the reader's copy began (the tombstones it may need are not older). */
  s: number;
}

/** A cursor names its resource by the name's first letter (each is distinct): one resource's position means nothing in another's stream. */
const tagOf = (resource: ExportResource) => resource[0];

export const encodeCursor = (p: Position, resource: ExportResource): string =>
  Buffer.from(`${p.t}.${p.k}.${p.id}.${p.s}.${tagOf(resource)}`).toString('base64url');

/**
 * A cursor this server wrote for this resource, or null. A cursor written before `s` existed counts
 * from its position; one written before the resource tag existed is taken by every resource.
 * Every position handed out is at most now (a change read, which is older than the horizon, or a
 * start time, which startAt keeps from the future), and so is the start of its copy: a cursor later
 * than now in either was never written here (a forged one would answer empty pages for as long).
 */
export function decodeCursor(cursor: string, resource: ExportResource): Position | null {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cursor)) return null;
  const m = /^(\d{1,10})\.([01])\.(\d{1,10})(?:\.(\d{1,10})(?:\.([a-z]))?)?$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!m || (m[5] !== undefined && m[5] !== tagOf(resource))) return null;
  const p: Position = { t: Number(m[1]), k: Number(m[2]) as 0 | 1, id: Number(m[3]), s: Number(m[4] ?? m[1]) };
  return p.t <= now() && p.s <= now() ? p : null;
}

/**
 * Where a reader starting at `start_time` begins: before every change at or after it; a start
 * time in the future begins now (nothing later exists yet, and its cursor stays one decodeCursor
 * takes). From the beginning (no start time), its copy begins with the first page's horizon (what
 * that page is complete up to; a moment before now, so that another process whose clock is a
 * little behind still takes the cursor).
 */
export function startAt(startTime: number): Position {
  const at = now();
  const t = Math.min(startTime, at);
  return { t, k: 0, id: 0, s: startTime ? t : at - config().exportSettleSeconds };
}

/** Whether the tombstones a reader at this position may need can have been pruned. */
export const cursorExpired = (p: Position): boolean => Math.max(p.s, p.t) < now() - config().exportTombstoneRetentionSeconds;

interface Tombstone { id: number; record_id: number; deleted_at: number }

/** A record (its columns, and their fingerprint: db/load.ts) or a tombstone, at its place in the stream. */
export type Item = { pos: Position; row?: Record<string, any>; fingerprint?: string; tombstone?: Tombstone };

/**
 * A record read with its fingerprint, as an item; the fingerprint moves out of the row (set
 * undefined, not deleted: a deleted property would turn each row into a slow dictionary for the
 * presenter, and JSON leaves undefined out).
 */
function recordItem(row: Record<string, any>, s: number): Item {
  const fingerprint = row._fingerprint as string;
  row._fingerprint = undefined;
  return { pos: { t: Number(row.updated_at), k: 0, id: Number(row.id), s }, row, fingerprint };
}

/** Stream order: negative when position `a` comes before `b`, 0 at the same place. */
export const comparePositions = (a: Position, b: Position): number => a.t - b.t || a.k - b.k || a.id - b.id;

/** The change order of records: the `(updated_at, id)` index. */
const KEYSET = [['updated_at', 'ASC'], ['id', 'ASC']] as const;

/**
 * The records in the stream after `from` up to `upTo` (a record's place, or with `k` 1 a
 * tombstone's or the end of a second), as Sequelize conditions: one range of the `(updated_at, id)`
 * index. (Each end written as `t > x OR (t = x AND id > y)`; `id > y` alone beside it makes MariaDB
 * merge a range of the primary key, every later id.)
 */
function recordsBetween(from: Position, upTo: Position): WhereOptions[] {
  return [
    { updated_at: { [Op.gte]: from.t, [Op.lte]: upTo.t } },
    from.k === 0 ? { [Op.or]: [{ updated_at: { [Op.gt]: from.t } }, { updated_at: from.t, id: { [Op.gt]: from.id } }] } : { updated_at: { [Op.gt]: from.t } },
    ...(upTo.k === 0 ? [{ [Op.or]: [{ updated_at: { [Op.lt]: upTo.t } }, { updated_at: upTo.t, id: { [Op.lte]: upTo.id } }] }] : []),
  ];
}

/** The end of second `t` in the stream: after every record and tombstone of it. */
const endOfSecond = (t: number, s: number): Position => ({ t, k: 1, id: Number.MAX_SAFE_INTEGER, s });

/**
 * The records (with their fingerprints: db/load.ts) and tombstones after `from` up to `upTo`
 * (both ends positions in the stream), in stream order: at most `limit` of each (so the first
 * `limit` of the merged stream are exact). In `transaction` when given.
 */
async function changesAfter(
  source: ChangeSource, from: Position, upTo: Position, limit: number, filter: BoundCondition | undefined, transaction?: Transaction,
): Promise<Item[]> {
  const model = source.model as unknown as ModelCtor<Entity> & typeof Entity;
  const conditions = recordsBetween(from, upTo);
  if (source.scope) conditions.push(source.scope);
  if (filter) conditions.push(filter.literal as unknown as WhereOptions);
  const records = () => loadWhere(model, {
    where: { [Op.and]: conditions }, order: KEYSET, limit,
    replacements: filter && isBound(filter) ? filter.replacements : {}, transaction,
    // The dirty read (heldBack's, in its transaction) needs the records' places and fingerprints only.
    fingerprint: true, attributes: transaction ? ['id', 'updated_at'] : source.attributes,
  }) as unknown as Promise<Record<string, any>[]>;
  const deletions = () => select<Tombstone>(
    `SELECT id, record_id, deleted_at FROM export_tombstones
      WHERE resource = :resource AND deleted_at >= :t AND deleted_at <= :ut AND (deleted_at > :t OR :k = 0 OR id > :id)
        AND (deleted_at < :ut OR (:uk = 1 AND id <= :uid))
      ORDER BY deleted_at, id LIMIT :n`,
    { resource: source.resource, t: from.t, k: from.k, id: from.id, ut: upTo.t, uk: upTo.k, uid: upTo.id, n: limit }, { transaction },
  );
  // Side by side on the pool; one after the other on a transaction's connection.
  const [rows, tombstones] = transaction ? [await records(), await deletions()] : await Promise.all([records(), deletions()]);
  return [
    ...rows.map((row) => recordItem(row, from.s)),
    ...tombstones.map((tombstone) => ({ pos: { t: Number(tombstone.deleted_at), k: 1 as const, id: Number(tombstone.id), s: from.s }, tombstone })),
  ].sort((a, b) => comparePositions(a.pos, b.pos));
}

/**
 * Where a narrowed page's span ends: the place of the `exportSearchSpan`th record changed after
 * `from` up to `upTo`, whatever it holds (read from the `(updated_at, id)` index alone), or null
 * when fewer follow. The records of a narrowed stream are tested one by one in the change order,
 * so a condition few records meet would read every change up to the horizon for one page (seconds
 * at a million tickets); within this span a page reads that many at most, and when it is not full
 * its cursor moves to the span's end, every match before it sent.
 */
async function spanEnd(source: ChangeSource, from: Position, upTo: Position): Promise<Position | null> {
  const [row] = await loadWhere(source.model as unknown as ModelCtor<Entity>, {
    where: { [Op.and]: recordsBetween(from, upTo) }, order: KEYSET, offset: config().exportSearchSpan - 1, limit: 1,
    replacements: {}, attributes: ['id', 'updated_at'],
  }) as unknown as Array<{ id: number; updated_at: number }>;
  return row ? { t: Number(row.updated_at), k: 0, id: Number(row.id), s: from.s } : null;
}

/** What a stream reads: a resource's model, narrowed by its scope. */
export interface ChangeSource {
  resource: ExportResource;
  model: unknown;
  scope?: WhereOptions;
  /** The records' columns read (default: all; the fingerprints are of every column whatever these are). */
  attributes?: readonly string[];
}

/** A page of the stream: its items, where the next starts, and up to when the stream is complete. */
export interface Changes {
  items: Item[];
  /** The position of the page's last item (`from` for an empty page). */
  next: Position;
  endOfStream: boolean;
  /** Seconds: once the stream ends, every change up to this second is in the pages read. */
  endTime: number;
}

/**
 * The changes after `from`, at most `limit`: records changed up to `exportSettleSeconds` ago (the
 * horizon) and tombstones, in stream order; the page stops before a change it finds uncommitted
 * (heldBack). Narrowed by `filter`, the page reads a bounded span of the stream (spanEnd) and may
 * hold fewer than `limit` changes, none at all, with more to follow.
 */
export async function readChanges(source: ChangeSource, from: Position, limit: number, filter?: BoundCondition): Promise<Changes> {
  const horizon = now() - config().exportSettleSeconds;
  if (from.t > horizon) return { items: [], next: from, endOfStream: true, endTime: horizon };
  const bound = filter ? await spanEnd(source, from, endOfSecond(horizon, from.s)) : null;
  const end = bound ?? endOfSecond(horizon, from.s);
  const items = await changesAfter(source, from, end, limit + 1, filter);
  const full = items.length > limit;
  const read = items.slice(0, limit);
  // The page's span: up to its last item when more follow, else up to its end (an empty page
  // too: its end time says up to when the copy is complete).
  const held = await heldBack(source, from, full ? read[read.length - 1].pos : end, read, filter);
  if (held) {
    // Nothing more can be read for now, and the copy is complete up to the second before.
    const page = read.filter((i) => comparePositions(i.pos, held) < 0);
    return { items: page, next: page.length ? page[page.length - 1].pos : from, endOfStream: true, endTime: Math.min(horizon, held.t - 1) };
  }
  // Not full within a bounded span: every change up to its end is sent; the next page starts there.
  const next = full || !bound ? (read.length ? read[read.length - 1].pos : from) : bound;
  return { items: read, next, endOfStream: !full && !bound, endTime: horizon };
}

/** An item's identity in the stream: where it is, and what it holds (a record's fingerprint). */
const sameItem = (a: Item, b: Item | undefined) =>
  !!b && comparePositions(a.pos, b.pos) === 0 && (a.tombstone ? !!b.tombstone : a.fingerprint === b.fingerprint);

/**
 * The first position of the page's span (after `from`, up to `upTo`: its last item, or its end
 * when the page is not full) where the primary now holds an item the page does not show as it is,
 * committed or not: a dirty read (READ UNCOMMITTED) of the same span, as the event feed checks its
 * own (src/core/event.ts, heldBack). Such an item belongs in the page: a row a transaction still
 * open has written (a customer's delete with 20,000 tickets writes its tombstones, then works on
 * for seconds), or changed again within the same second, or one committed since the page was read.
 * The page stops before it, so no reader passes a change that commits later, however much later;
 * a rolled-back change leaves nothing, and the readers go on. (A row stamped an instant before it
 * is written is the settle seconds' part.) Undefined when the span holds nothing else.
 */
async function heldBack(
  source: ChangeSource, from: Position, upTo: Position, shown: Item[], filter: BoundCondition | undefined,
): Promise<Position | undefined> {
  const current = await readUncommitted((t) => changesAfter(source, from, upTo, shown.length + 1, filter, t));
  const inPage = new Map(shown.map((i) => [`${i.pos.k}.${i.pos.id}.${i.pos.t}`, i]));
  return current.find((i) => !sameItem(i, inPage.get(`${i.pos.k}.${i.pos.id}.${i.pos.t}`)))?.pos;
}
