import type { QueryInterface } from 'sequelize';

export const name = '039_brand_smtp_password';

/**
 * A brand's SMTP password is stored encrypted, as mailbox passwords are (src/crypto/secrets.ts):
 * the column takes the encrypted form (`v1:<key id>:<base64>` of a 255-character password is some
 * 400 characters; 2048 as department_emails.password). A password stored before stays readable as
 * it is and is encrypted when next written: this migration needs no SECRET_KEY.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE brands MODIFY smtp_password VARCHAR(2048) NULL');
}

export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE brands MODIFY smtp_password VARCHAR(255) NULL');
}
