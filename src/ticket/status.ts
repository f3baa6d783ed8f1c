import type { Transaction } from 'sequelize';
import { Setting, Ticket, TicketStatus } from '../db/models';
import { ValidationError } from '../errors';
import { assertNameFree } from '../db/uniqueName';
import { assertNotInFilters } from './filterUse';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';
import type { TranslationSpec } from '../translations';
import { Joi, field } from '../lib/validation';
import { colourField } from './fields';
import { nextOrder } from '../db/order';

export const STATUS_FIELDS = ['id', 'name', 'colour', 'auto_close', 'order', 'created_at', 'updated_at'] as const;

/** A status as its resource shows it (also what tickets embed). */
export const serializeStatus = (s: TicketStatus) => pick(s, STATUS_FIELDS);

export const STATUS_TRANSLATIONS: TranslationSpec = { type: 'ticket_status', key: 'status_id', fields: ['name'] };

/** The ticket settings that name a status, and how a refusal reads. */
const DEFAULT_STATUS_SETTINGS: Record<string, string> = {
  default_open_status: 'the default open status',
  default_resolved_status: 'the default resolved status',
};

/**
 * Why a status cannot be deleted, or null when it can. A status named by the ticket settings
 * (default_open_status, default_resolved_status) is in use, and so is a status a ticket has.
 */
export async function statusInUse(id: number, transaction: Transaction): Promise<string | null> {
  const settings = await Setting.findAll({
    where: { scope: 'ticket', name: Object.keys(DEFAULT_STATUS_SETTINGS) }, transaction, lock: transaction.LOCK.SHARE,
  });
  const named = settings.find((s) => s.value.trim() === String(id));
  if (named) return `The status cannot be deleted because it is ${DEFAULT_STATUS_SETTINGS[named.name]} in the ticket settings (${named.name}).`;
  // Tickets in the trash count too: they can be restored.
  if (await Ticket.findOne({ attributes: ['id'], where: { status_id: id }, transaction, lock: transaction.LOCK.SHARE })) {
    return 'The status cannot be deleted because tickets have it: give them another status first.';
  }
  return null;
}

export const statusResource: ResourceDef<TicketStatus> = {
  path: '/status',
  model: TicketStatus,
  label: 'status',
  sortable: ['name', 'order', 'auto_close', 'created_at', 'updated_at'],
  translations: STATUS_TRANSLATIONS,
  // The spec: `name` is required on update too.
  createSchema: Joi.object({
    name: field.string().required(), colour: colourField().default('#ffffff'), auto_close: field.flag().default(0), order: field.order(),
  }),
  updateSchema: Joi.object({ name: field.string().required(), colour: colourField(), auto_close: field.flag(), order: field.order() }),

  async create(input, { transaction }) {
    await assertNameFree(TicketStatus, input.name, null, transaction);
    return TicketStatus.create({ ...input, order: input.order ?? (await nextOrder(TicketStatus, transaction)) }, { transaction });
  },

  async update(status, input, { transaction }) {
    if (input.name !== undefined) await assertNameFree(TicketStatus, input.name, status.id, transaction);
    await status.update(input, { transaction });
  },

  async destroy(status, { transaction }) {
    const reason = await statusInUse(status.id, transaction);
    if (reason) throw new ValidationError(reason);
    await assertNotInFilters('status', status.id, 'status', transaction);
    await status.destroy({ transaction });
  },

  serialize: serializeStatus,
};

export const statusRouter = resourceRouter(statusResource);
