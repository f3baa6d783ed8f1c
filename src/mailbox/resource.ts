import { DepartmentEmail, IncomingMail } from '../db/models';
import { INCOMING_DECISIONS } from '../db/models/IncomingMail';
import { ValidationError, invalid } from '../errors';
import { equals } from '../http/listQuery';
import { resourceRouter, type CustomAction, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';
import { Joi, field } from '../lib/validation';
import { dryRunMail } from './ingest';

/**
 * `/api/ticket/incomingmail[/{id}]`: the ingestion ledger, one line per mail the mailbox worker
 * fetched, with the decision taken (new_ticket, reply, duplicate, loop, bounce, spam, rejected,
 * error), why, and the ticket and message it produced. `POST /api/ticket/incomingmail/dryrun`
 * takes a raw mail and answers the decision the worker would take, without importing or
 * recording anything (every rule runs in a transaction that is rolled back).
 */

export const INCOMING_MAIL_FIELDS = [
  'id', 'department_email_id', 'remote_uid', 'message_id', 'from_address', 'subject', 'decision', 'reason', 'ticket_id',
  'ticket_message_id', 'size', 'created_at', 'updated_at',
] as const;

const dryRun: CustomAction<IncomingMail> = {
  name: 'dryrun',
  method: 'POST',
  path: '/dryrun',
  message: 'The mail was not imported: this is the decision it would get.',
  writesNothing: true,
  schema: Joi.object({
    raw: Joi.string().max(40 * 1024 * 1024),
    raw_base64: Joi.string().max(56 * 1024 * 1024),
    department_email_id: field.id(),
  }),
  async run({ input }) {
    if (input.raw === undefined && input.raw_base64 === undefined) throw new ValidationError('The raw field is required.');
    if (input.raw !== undefined && input.raw_base64 !== undefined) throw new ValidationError('Send raw or raw_base64, not both.');
    const departmentEmail = input.department_email_id ? await DepartmentEmail.findByPk(input.department_email_id) : null;
    if (input.department_email_id && !departmentEmail) throw invalid('department_email_id');
    const raw = input.raw !== undefined ? Buffer.from(input.raw, 'utf8') : Buffer.from(input.raw_base64, 'base64');
    if (!raw.length) throw new ValidationError('The raw field is required.');
    const result = await dryRunMail(raw, { departmentEmail });
    // What the rolled-back import created has no id: a new ticket's, a new message's (a reply's
    // ticket, a duplicate's ticket and message exist and are named).
    const created = result.decision === 'new_ticket' || result.decision === 'reply';
    return IncomingMail.build({
      id: null, department_email_id: departmentEmail?.id ?? null, remote_uid: null, message_id: result.mailMessageId,
      from_address: result.from, subject: result.subject, decision: result.decision, reason: result.reason,
      ticket_id: result.decision === 'new_ticket' ? null : result.ticketId, ticket_message_id: created ? null : result.messageId,
      size: raw.length, created_at: null, updated_at: null,
    });
  },
};

export const incomingMailResource: ResourceDef<IncomingMail> = {
  path: '/incomingmail',
  model: IncomingMail,
  label: 'incoming mail',
  actions: ['list', 'show'],
  counted: { kind: 'incoming', byValue: ['decision'] },
  sortable: ['decision', 'created_at', 'updated_at'],
  filters: {
    department_email_id: equals('department_email_id', field.id()),
    decision: equals('decision', Joi.string().valid(...INCOMING_DECISIONS)),
    message_id: equals('message_id', field.string(255).replace(/^<|>$/g, '')),
    from_address: equals('from_address', field.email()),
    ticket_id: equals('ticket_id', field.id()),
  },
  dates: true,
  serialize: (m) => pick(m, INCOMING_MAIL_FIELDS),
  custom: [dryRun],
};

export const incomingMailRouter = resourceRouter(incomingMailResource);
