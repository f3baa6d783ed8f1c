import { Router } from 'express';
import { config } from '../config';
import { readsFromPrimary } from '../db/readRouting';
import { sendSuccess } from '../http/envelope';
import { grantsOf } from '../http/auth';
import { MethodNotAllowedError, UrlNotFoundError } from '../http/errors';
import { ValidationError, invalid } from '../errors';
import { MAX_LIMIT, validateQuery } from '../http/listQuery';
import { mountRoutes, recorded, type RecordedRouter } from '../http/routes';
import { Joi, field } from '../lib/validation';
import { articleResource } from '../selfservice/article/resource';
import { messageResource } from '../ticket/messages/resource';
import { ticketResource } from '../ticket/tickets/resource';
import { ticketSearchCondition, ticketSearchText } from '../ticket/tickets/search/compile';
import { organisationResource } from '../user/organisation';
import { userResource } from '../user/users/resource';
import { cursorExpired, decodeCursor, readPage, startAt, type ExportSource } from './feed';
import { EXPORT_RESOURCES, type ExportResource } from './tombstones';

const SOURCES: Record<ExportResource, ExportSource> = {
  tickets: { resource: 'tickets', def: ticketResource },
  messages: { resource: 'messages', def: messageResource },
  users: { resource: 'users', def: userResource },
  organisations: { resource: 'organisations', def: organisationResource },
  articles: { resource: 'articles', def: articleResource },
};

export const EXPORT_DEFAULT_LIMIT = 100;

export const exportQuery = Joi.object({
  cursor: Joi.string().trim().max(64)
    .description('`after_cursor` of the previous page: the changes after it are returned. Wins over `start_time`.'),
  start_time: field.timestamp().description('UNIX seconds: start with the records changed (or deleted) at or after this time. Neither this nor `cursor`: from the beginning.'),
  limit: Joi.number().unsafe().integer().min(1).default(EXPORT_DEFAULT_LIMIT).description(`Records and tombstones per page (at most ${MAX_LIMIT}).`),
  search: ticketSearchText()
    .description('Tickets only: the ticket search language (as the ticket list\'s `search`); only the tickets that match are exported (tombstones are not narrowed).'),
});

/**
 * `GET /api/export/{resource}`: the incremental export (./feed.ts). Read-only.
 */
function exportRouter(): RecordedRouter {
  const router = Router();
  const path = '/:resource';
  router.get(path, async (req, res) => {
    if (!Object.hasOwn(SOURCES, req.params.resource)) throw new UrlNotFoundError(req.method, req.originalUrl);
    const source = SOURCES[req.params.resource as ExportResource];
    const q = validateQuery<{ cursor?: string; start_time?: number; limit: number; search?: string | null }>(exportQuery, req.query);
    const from = q.cursor ? decodeCursor(q.cursor, source.resource) : startAt(q.start_time ?? 0);
    if (!from) throw invalid('cursor');
    if (cursorExpired(from)) {
      const days = config().exportTombstoneRetentionSeconds / 86400;
      throw new ValidationError(q.cursor
        ? `The cursor has expired: deletions are kept for ${days} days only. Start the export again without a cursor.`
        : `The start time is more than ${days} days ago, longer than deletions are kept: start without one.`);
    }
    if (q.search && source.resource !== 'tickets') throw new ValidationError('The search is only accepted by the tickets export.');
    const filter = q.search ? await ticketSearchCondition(q.search) : undefined;
    sendSuccess(res, await readsFromPrimary(() => readPage(source, from, Math.min(q.limit, MAX_LIMIT), grantsOf(res), filter)));
  });
  router.all(path, (req) => {
    throw new MethodNotAllowedError(req.method, 'GET');
  });
  // One record per resource: the OpenAPI document names each path.
  return recorded(router, EXPORT_RESOURCES.map((r) => ({ method: 'GET' as const, path: `/${r}`, action: 'export', label: r, query: exportQuery })));
}

export const exportAreaRouter = exportRouter();
mountRoutes('/api/export', [exportAreaRouter]);
