import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { id, str, tableOptions, text, timestamps } from './columns';

export const name = '020_mail_catcher';

/**
 * The mail catcher's store (src/mailcatcher): the mails its SMTP server received, newest kept,
 * read by the web process's `/admin/mail` page and `/api/core/mailcatcher`.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.createTable('caught_mails', {
    id: id(),
    mail_from: str(998),
    rcpt_to: str(4096, false),
    subject: str(998),
    message_id: str(998),
    text: text(),
    html: text(),
    // The header block as received (the body is in text and html).
    headers: text(),
    size: { type: DataTypes.INTEGER.UNSIGNED, allowNull: false },
    ...timestamps(),
  }, tableOptions);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.dropTable('caught_mails');
}
