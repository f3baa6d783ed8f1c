import { Op, type Transaction } from 'sequelize';
import { deleteCustomFieldValues } from '../../customfields/values';
import { Ticket } from '../../db/models';

/**
 * Deletes tickets for good (locked by the caller), and the tickets merged into them, whose
 * messages they hold: with their messages, attachments, feedback and audit history (the foreign
 * keys' cascades) and their custom field values. The tickets themselves go by statements of
 * their own, never by a cascade: MariaDB runs no trigger for a cascaded delete, and the ticket
 * list's counters are kept by triggers; the merged ones first, or the foreign key would only clear
 * their `merged_into_id`, listing them again, uncounted. The export's tombstones are the caller's
 * (written before, as they read the rows that go). Returns the ids deleted, for their events.
 */
export async function deleteTicketsForGood(ids: number[], transaction: Transaction): Promise<number[]> {
  if (!ids.length) return [];
  // Locking read: a ticket merged into one of them meanwhile waits, rather than escape its event.
  const merged = (await Ticket.findAll({ attributes: ['id'], where: { merged_into_id: { [Op.in]: ids } }, transaction, lock: transaction.LOCK.UPDATE })).map((t) => t.id);
  if (merged.length) await Ticket.destroy({ where: { id: { [Op.in]: merged } }, transaction });
  await Ticket.destroy({ where: { id: { [Op.in]: ids } }, transaction });
  const deleted = [...merged, ...ids].sort((a, b) => a - b);
  // No foreign key: a value's owner is a ticket, user or organisation by its field's kind.
  await deleteCustomFieldValues('ticket', deleted, transaction);
  return deleted;
}
