import { Router } from 'express';
import { Op, type WhereOptions } from 'sequelize';
import { config } from '../config';
import { DomainEvent } from '../db/models';
import { now } from '../db/entity';
import { select } from '../db/select';
import { EVENT_NAMES } from '../events';
import { sendSuccess } from '../http/envelope';
import { MethodNotAllowedError } from '../http/errors';
import { NotFoundError } from '../errors';
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
    .description('The id of the last event already read (`next_cursor` of the previous page); events after it are returned. 0: from the beginning.'),
  // Above the maximum is clamped, as list limits are.
  limit: Joi.number().unsafe().integer().min(1).default(DEFAULT_LIMIT).description(`Events per page (at most ${MAX_LIMIT}).`),
  type: types.description(`Only these event types (comma-separated): ${EVENT_NAMES.join(', ')}.`),
});

/**
 * The first id that must not be read yet: the first recent event (younger than the settle time)
 * that follows a gap in ids. A gap may be a transaction that took an id and has not committed;
 * reading past it would skip that event for good, so a reader stops before it until the gap is
 * filled or old enough to be a rolled-back insert. Two small queries over the last seconds only.
 */
async function horizon(cursor: number): Promise<number | undefined> {
  const settle = config().eventFeedSettleSeconds;
  if (!settle) return undefined;
  const recent = await DomainEvent.findAll({
    attributes: ['id'], where: { id: { [Op.gt]: cursor }, created_at: { [Op.gte]: now() - settle } }, order: [['id', 'ASC']], raw: true,
  });
  if (!recent.length) return undefined;
  const first = recent[0].id;
  if (first > 1) {
    const [before] = await select<{ n: number }>('SELECT COUNT(*) AS n FROM events WHERE id = ?', [first - 1]);
    if (Number(before.n) === 0) return first;
  }
  for (let i = 1; i < recent.length; i++) if (recent[i].id !== recent[i - 1].id + 1) return recent[i].id;
  return undefined;
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
    const stop = await horizon(q.cursor);
    const id: Record<symbol, number> = { [Op.gt]: q.cursor };
    if (stop !== undefined) id[Op.lt] = stop;
    const where: WhereOptions = q.type ? { id, name: { [Op.in]: q.type } } : { id };
    const rows = await DomainEvent.findAll({ where, order: [['id', 'ASC']], limit: limit + 1 });
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
