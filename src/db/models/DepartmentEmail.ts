import { Column, DataType, Table } from 'sequelize-typescript';
import { flag } from '../entity';
import { OAuthAccount } from './oauthAccount';

export type MailProtocol = 'imap' | 'pop3';
export type MailEncryption = 'none' | 'ssl' | 'tls';

/**
 * An email address of a department. Type 0: mail reaches the help desk by piping or forwarding;
 * type 1: the mailbox worker fetches it from a remote mailbox (protocol, server, port, encryption,
 * username, password). The password is stored encrypted (crypto/secrets.ts, MAILBOX_PASSWORD).
 */
@Table({ tableName: 'department_emails' })
export class DepartmentEmail extends OAuthAccount {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare department_id: number;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare brand_id: number;
  /** Unique across departments; the key's name lets a duplicate read "The address has already been taken." */
  @Column({ type: DataType.STRING(255), allowNull: false, unique: 'department_emails_address_unique' }) declare address: string;
  @Column({ type: DataType.TINYINT.UNSIGNED, allowNull: false, defaultValue: 0 }) declare type: number;
  @Column({ type: DataType.STRING(8), allowNull: false, defaultValue: 'imap' }) declare protocol: MailProtocol;
  @Column(DataType.STRING(255)) declare server: string | null;
  @Column(DataType.STRING(255)) declare username: string | null;
  /** `v1:<key id>:<base64>`, never the clear password. */
  @Column(DataType.STRING(2048)) declare password: string | null;
  @Column(DataType.INTEGER.UNSIGNED) declare port: number | null;
  @Column({ type: DataType.STRING(8), allowNull: false, defaultValue: 'ssl' }) declare encryption: MailEncryption;
  @Column(flag(0)) declare consume_all: number;
  @Column(flag(0)) declare delete_downloaded: number;
  /** Written by the mailbox worker. */
  @Column(DataType.INTEGER.UNSIGNED) declare last_polled_at: number | null;
  @Column(DataType.TEXT) declare last_error: string | null;
  @Column(DataType.INTEGER.UNSIGNED) declare last_error_at: number | null;
  /** IMAP: the UIDVALIDITY the last UID belongs to (a BigInt, kept as a string). */
  @Column(DataType.STRING(32)) declare imap_uidvalidity: string | null;
  /** IMAP: every UID up to this one has been taken (advanced in the transaction of each import). */
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false, defaultValue: 0 }) declare imap_last_uid: number;
  /** IMAP: the last UID when the first poll listed the mailbox; a mail up to it flagged \Seen (read before) is not imported (src/mailbox/imap.ts). */
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false, defaultValue: 0 }) declare imap_first_poll_uid: number;
  /** IMAP with delete_downloaded: the mails up to this UID have been put away; those left there stay on purpose (src/mailbox/imap.ts). */
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false, defaultValue: 0 }) declare imap_swept_uid: number;
  /** Polls failed in a row (0 after a good one): the backoff before the next. */
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false, defaultValue: 0 }) declare poll_failures: number;
  /** Not polled before this time (UNIX seconds; null: at the next round). */
  @Column(DataType.INTEGER.UNSIGNED) declare next_poll_at: number | null;
  /** Moved by every change of the settings through the API: a poll begun with another stops (src/mailbox/pollGuard.ts). Not shown. */
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false, defaultValue: 0 }) declare settings_version: number;
}
