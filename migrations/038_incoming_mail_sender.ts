import type { QueryInterface } from 'sequelize';

export const name = '038_incoming_mail_sender';

/**
 * The ledger's lines of one sender in time order: the new-ticket flood limit counts the tickets an
 * address opened within its window (src/mailbox/flood.ts) by a range of this index, not a scan of
 * every line of the window.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.addIndex('incoming_mails', ['from_address', 'created_at'], { name: 'incoming_mails_sender' });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.removeIndex('incoming_mails', 'incoming_mails_sender');
}
