import { Router } from 'express';
import { Ticket } from '../../db/models';
import { select } from '../../db/select';
import { sendList } from '../../http/envelope';
import { MethodNotAllowedError } from '../../http/errors';
import { NotFoundError } from '../../errors';
import { MAX_LIMIT, pagingParams, validateQuery } from '../../http/listQuery';
import { parseId } from '../../http/resource';
import { recorded, type RecordedRouter } from '../../http/routes';
import { Joi } from '../../lib/validation';

/** In id order (the order they were written), either way. */
export const auditQuery = Joi.object(pagingParams([]));

interface AuditRow { id: number; ticket_id: number; action: string; actor_type: string; actor_id: number | null; channel: string; changes: string; created_at: number }

/** An audit entry as the API shows it. */
export const presentAudit = (r: AuditRow) => ({
  id: Number(r.id), ticket_id: Number(r.ticket_id), action: r.action,
  actor: { type: r.actor_type, id: r.actor_id === null ? null : Number(r.actor_id) },
  channel: r.channel, changes: JSON.parse(r.changes), created_at: Number(r.created_at),
});

/** `GET /api/ticket/ticket/{id}/audit`: the ticket's changes, oldest first unless `order_direction=desc` (tickets/audit.ts writes them). */
function auditRouter(): RecordedRouter {
  const router = Router();
  const path = '/ticket/:id/audit';
  router.get(path, async (req, res) => {
    const id = parseId(req.params.id);
    const ticket = id === null ? null : await Ticket.findByPk(id, { attributes: ['id'] });
    if (!ticket) throw new NotFoundError('ticket');
    const q = validateQuery<{ start: number; limit: number; order_direction: 'asc' | 'desc' }>(auditQuery, req.query);
    const replacements = { id: ticket.id, offset: q.start - 1, limit: Math.min(q.limit, MAX_LIMIT) };
    const [rows, [{ n }]] = await Promise.all([
      select<AuditRow>(`SELECT * FROM ticket_audits WHERE ticket_id = :id ORDER BY id ${q.order_direction === 'desc' ? 'DESC' : 'ASC'} LIMIT :limit OFFSET :offset`, replacements),
      select<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_audits WHERE ticket_id = :id', replacements),
    ]);
    sendList(res, rows.map(presentAudit), Number(n));
  });
  router.all(path, (req) => {
    throw new MethodNotAllowedError(req.method, 'GET');
  });
  return recorded(router, [{ method: 'GET', path, action: 'audit', label: 'ticket', query: auditQuery }]);
}

export const ticketAuditRouter = auditRouter();
