import type { Transaction } from 'sequelize';
import { CannedResponse, Translation } from '../db/models';
import type { TranslationSpec } from '../translations';

export const CANNED_RESPONSE_TRANSLATIONS: TranslationSpec = { type: 'canned_response', key: 'response_id', fields: ['name', 'text'], html: ['text'] };

/**
 * An operator's private canned responses go with the operator, as their private filters do: no
 * one else may see them, and a private response without its owner is one the API refuses to hold
 * (`The user id field is required when public is 0.`). Their tags and groups go by the foreign
 * keys, their translations here.
 */
export async function deletePrivateResponsesOf(operatorId: number, transaction: Transaction): Promise<void> {
  const owned = await CannedResponse.findAll({ attributes: ['id'], where: { user_id: operatorId, public: 0 }, transaction, lock: transaction.LOCK.UPDATE });
  if (!owned.length) return;
  const ids = owned.map((r) => r.id);
  await Translation.destroy({ where: { record_type: CANNED_RESPONSE_TRANSLATIONS.type, record_id: ids }, transaction });
  await CannedResponse.destroy({ where: { id: ids }, transaction });
}
