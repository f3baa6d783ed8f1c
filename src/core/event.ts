import { Router } from 'express';
import { config } from '../config';
import { DomainEvent } from '../db/models';
import { now } from '../db/entity';
import { readsFromPrimary } from '../db/readRouting';
import { select } from '../db/select';
import { readUncommitted } from '../db/transaction';
import { EVENT_NAMES } from '../events';
import { sendSuccess } from '../http/envelope';
import { MethodNotAllowedError } from '../http/errors';
import { NotFoundError, ValidationError, invalid } from '../errors';
import { DEFAULT_LIMIT, MAX_LIMIT, validateQuery } from '../http/listQuery';
import { parseId } from '../http/resource';
import { recorded, type RecordedRouter } from '../http/routes';
import { Joi } from '../lib/validation';
import { presentEvent } from '../webhooks/deliver';

const known = new Set<string>(EVENT_NAMES);

/** `type`: one event name or a comma-separated list of them. */
const types = Joi.string().trim().max(2000).custom((value: string, helpers) => {
  const names = [...new Set(value.split(',').map((s) => s.trim()).filter(Boolean))];
  if (!names.length || names.some((n) => !known.has(n))) return helpers.error('any.invalid');
  return names;
});

export const eventFeedQuery = Joi.object({
  cursor: Joi.number().integer().min(0).max(4294967295).default(0)
    .description('The id of the last event already read (`next_cursor` of the previous page); events after it are returned. 0: from the beginning (the oldest event kept); past the newest event, or before events removed since (EVENT_RETENTION_DAYS): 422.'),
  // Above the maximum is clamped, as list limits are.
  limit: Joi.number().unsafe().integer().min(1).default(DEFAULT_LIMIT).description(`Events per page (at most ${MAX_LIMIT}).`),
  type: types.description(`Only these event types (comma-separated): ${EVENT_NAMES.join(', ')}.`),
});

type EventRow = Pick<DomainEvent, 'id' | 'name' | 'payload' | 'created_at'>;

/**
 * A page of the feed after `cursor` (`limit` rows), and the newest event's id (null: none yet).
 * It stops before the first recent event (younger than the settle time) that follows a gap in ids:
 * a gap may be a transaction that took an id and has not inserted its row yet (an id is taken an
 * instant before its row is written). The gap check is a subquery of the page's own statement, so
 * both read one snapshot: checked first and paged after, a transaction committing in between put
 * an event past a gap the check had not seen into the page. The newest id is read by the same
 * statement (the page joined to it, so an empty page still answers one row): a cursor past it was
 * never handed out. An older gap is checked on the primary by heldBack.
 */
async function feedPage(cursor: number, limit: number, types: string[] | undefined): Promise<{ rows: EventRow[]; newest: number; pruned: number }> {
  const values: unknown[] = [cursor];
  let page = `SELECT id, name, payload, created_at FROM events WHERE id > ?${typeFilter(types, values)}`;
  const settle = config().eventFeedSettleSeconds;
  if (settle) {
    // The recent events by events_created_at; each one's predecessor by the primary key.
    page += ` AND id < COALESCE((SELECT MIN(r.id) FROM events r WHERE r.created_at >= ? AND r.id > ? AND r.id > 1
      AND NOT EXISTS (SELECT 1 FROM events p WHERE p.id = r.id - 1)), 4294967296)`;
    values.push(now() - settle, cursor);
  }
  page += ' ORDER BY id LIMIT ?';
  values.push(limit);
  const rows = await select<EventRow & { newest: number | null; pruned: number | null }>(
    `SELECT e.id, e.name, e.payload, e.created_at, n.newest, n.pruned
      FROM (SELECT MAX(id) AS newest, (SELECT through_id FROM log_prunes WHERE log = 'events') AS pruned FROM events) n
      LEFT JOIN (${page}) e ON TRUE ORDER BY e.id`,
    values,
  );
  return {
    rows: rows.filter((r) => r.id !== null).map(({ newest: _, pruned: __, ...r }) => r),
    newest: Math.max(Number(rows[0].newest ?? 0), Number(rows[0].pruned ?? 0)),
    pruned: Number(rows[0].pruned ?? 0),
  };
}

/** ` AND name IN (...)` for `types` (its values appended to `values`), or nothing. */
function typeFilter(types: string[] | undefined, values: unknown[]): string {
  if (!types) return '';
  values.push(...types);
  return ` AND name IN (${types.map(() => '?').join(', ')})`;
}

/**
 * The first id of the page's span that the page does not show but the primary holds now, committed
 * or not (a dirty read: READ UNCOMMITTED, ids only, by the primary key or events_name_id), or
 * undefined. Such an event belongs before the page's later rows: a transaction that inserted it
 * longer ago than the settle time and has not committed (a user's delete with thousands of
 * tickets, say), one that committed since the page's snapshot, or one a replica has not applied
 * yet. The page stops before it; the reader gets it on a later page, once committed (a rolled-back
 * insert leaves no row, and the reader passes its id). One transaction on the primary, whatever
 * the page.
 */
async function heldBack(cursor: number, rows: EventRow[], types: string[] | undefined): Promise<number | undefined> {
  const values: unknown[] = [cursor, rows[rows.length - 1].id];
  const sql = `SELECT id FROM events WHERE id > ? AND id <= ?${typeFilter(types, values)} ORDER BY id`;
  const held = await readUncommitted((t) => select<{ id: number }>(sql, values, { transaction: t }));
  const shown = new Set(rows.map((r) => r.id));
  return held.find((r) => !shown.has(r.id))?.id;
}

/**
 * The page, or a 422 for a cursor past the newest event (never handed out: a forged or corrupt one
 * would answer empty pages until the ids reached it, skipping every event before). A replica that
 * lags may not have the newest event yet: that answer is checked again on the primary.
 */
async function checkedFeedPage(cursor: number, limit: number, types: string[] | undefined): Promise<EventRow[]> {
  let page = await feedPage(cursor, limit, types);
  if (cursor > page.newest) page = await readsFromPrimary(() => feedPage(cursor, limit, types));
  if (cursor > page.newest) throw invalid('cursor');
  if (cursor > 0 && cursor < page.pruned) {
    const days = config().eventRetentionSeconds / 86400;
    throw new ValidationError(`The cursor has expired: events after it have been removed${days ? ` (events are kept for ${days} days)` : ''}. Read the feed again from cursor 0.`);
  }
  if (!page.rows.length) return page.rows;
  const before = await heldBack(cursor, page.rows, types);
  return before === undefined ? page.rows : page.rows.filter((r) => r.id < before);
}

/**
 * `GET /api/core/event`: every event in id order after `cursor` (exclusive), `limit` at a time, with
 * the cursor of the next page; `GET /api/core/event/{id}`: one event. Read-only: the feed is
 * written by the changes themselves (events.ts).
 */
function eventRouter(): RecordedRouter {
  const router = Router();
  router.get('/event', async (req, res) => {
    const q = validateQuery<{ cursor: number; limit: number; type?: string[] }>(eventFeedQuery, req.query);
    const limit = Math.min(q.limit, MAX_LIMIT);
    const rows = await checkedFeedPage(q.cursor, limit + 1, q.type);
    const page = rows.slice(0, limit);
    sendSuccess(res, {
      events: page.map(presentEvent),
      next_cursor: page.length ? page[page.length - 1].id : q.cursor,
      has_more: rows.length > limit,
    });
  });
  router.get('/event/:id', async (req, res) => {
    const id = parseId(req.params.id);
    const event = id === null ? null : await DomainEvent.findByPk(id);
    if (!event) throw new NotFoundError('event');
    sendSuccess(res, presentEvent(event));
  });
  for (const path of ['/event', '/event/:id']) {
    router.all(path, (req) => {
      throw new MethodNotAllowedError(req.method, 'GET');
    });
  }
  return recorded(router, [
    { method: 'GET', path: '/event', action: 'feed', label: 'event', query: eventFeedQuery },
    { method: 'GET', path: '/event/:id', action: 'show', label: 'event' },
  ]);
}

export const eventFeedRouter = eventRouter();
