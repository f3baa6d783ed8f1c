import { Op, type Transaction } from 'sequelize';
import { Setting } from '../db/models';
import { cachedValue, configVersion } from './configCache';

/** The settings the ticket area acts on, read together (one statement). */
export interface TicketSettings {
  /** `allowed_files`: extensions, lower case, without dots; null when every file is allowed (`*`, `?.*`). */
  allowedExtensions: string[] | null;
  defaultOpenStatus: number | null;
  defaultResolvedStatus: number | null;
  ticketNumberFormat: string | null;
  /** The core `default_timezone` (ticket number date tokens, SLA plans without a zone). */
  defaultTimezone: string;
  /** The core `admin_folder` (operator URLs). */
  adminFolder: string;
}

const statusId = (value: string | undefined): number | null => {
  const n = Number(value?.trim());
  return Number.isSafeInteger(n) && n > 0 ? n : null;
};

/** `jpg|png|?.*` → null (all); `jpg|.PNG` → ['jpg', 'png']. */
export function parseAllowedFiles(value: string | undefined): string[] | null {
  const parts = (value ?? '').split('|').map((p) => p.trim().toLowerCase().replace(/^\*?\./, '')).filter(Boolean);
  if (parts.some((p) => p === '*' || p === '?.*' || p === '?*' || p === '.*')) return null;
  return [...new Set(parts)];
}

export async function ticketSettings(transaction?: Transaction): Promise<TicketSettings> {
  const rows = await Setting.findAll({
    attributes: ['scope', 'name', 'value'],
    where: { [Op.or]: [{ scope: 'ticket' }, { scope: 'core', name: { [Op.in]: ['default_timezone', 'admin_folder'] } }] },
    transaction,
  });
  const get = (scope: string, name: string) => rows.find((r) => r.scope === scope && r.name === name)?.value;
  return {
    allowedExtensions: parseAllowedFiles(get('ticket', 'allowed_files')),
    defaultOpenStatus: statusId(get('ticket', 'default_open_status')),
    defaultResolvedStatus: statusId(get('ticket', 'default_resolved_status')),
    ticketNumberFormat: get('ticket', 'ticket_number_format')?.trim() || null,
    defaultTimezone: get('core', 'default_timezone') || 'UTC',
    adminFolder: (get('core', 'admin_folder') || 'admin').replace(/^\/+|\/+$/g, ''),
  };
}

/**
 * The settings from the config cache (no statement when warm); on a miss read in `transaction` and
 * not kept (its snapshot may predate the version), while a read outside it fills the cache.
 */
export async function cachedTicketSettings(transaction: Transaction): Promise<TicketSettings> {
  return cachedValue('ticket-settings', await configVersion(), (t) => ticketSettings(t), transaction);
}
