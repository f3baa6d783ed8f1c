import type { Transaction } from 'sequelize';
import { Channel } from '../db/models';

/**
 * The channel of a name, case-insensitively (`web`, `Web` and `WEB` are the Web channel: the
 * column's collation compares that way), or null.
 */
export async function channelByName(name: string, transaction?: Transaction): Promise<Channel | null> {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > 64) return null;
  return Channel.findOne({ where: { name: trimmed }, transaction });
}
