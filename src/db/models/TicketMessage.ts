import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

/** Who wrote a message. */
export const BY = { OPERATOR: 0, USER: 1 } as const;
/** What a message is. */
export const MESSAGE_TYPE = { MESSAGE: 0, NOTE: 1, FORWARD: 2 } as const;

/** What a forward stores in `extra` (JSON). */
export interface ForwardExtra {
  to_address: string[] | null;
  cc_address: string[] | null;
  bcc_address: string[] | null;
  subject: string;
  /** The address it is sent from: a department email's, or the operator's own. */
  from_address: string | null;
}

/** A message of a ticket: a reply (type 0), an operator note (1) or a forwarded email (2). */
@Table({ tableName: 'ticket_messages' })
export class TicketMessage extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare ticket_id: number;
  /** The ticket it was written on, when a merge moved it. */
  @Column(DataType.INTEGER.UNSIGNED) declare original_ticket_id: number | null;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare channel_id: number;
  /** The author (a user or an operator); null once that person is deleted. */
  @Column(DataType.INTEGER.UNSIGNED) declare user_id: number | null;
  @Column(DataType.STRING(45)) declare user_ip_address: string | null;
  /** 0 operator, 1 user. */
  @Column({ type: DataType.TINYINT.UNSIGNED, allowNull: false, defaultValue: 1 }) declare by: number;
  /** 0 message, 1 operator note, 2 forwarded email. */
  @Column({ type: DataType.TINYINT.UNSIGNED, allowNull: false, defaultValue: 0 }) declare type: number;
  @Column({ type: DataType.TEXT, allowNull: false }) declare text: string;
  @Column(flag(0)) declare is_draft: number;
  @Column(flag(0)) declare pinned: number;
  @Column(DataType.STRING(255)) declare social_id: string | null;
  /** JSON array of the addresses the message was copied to. */
  @Column(DataType.TEXT) declare cc: string | null;
  /** Forwards: JSON ForwardExtra. */
  @Column(DataType.TEXT) declare extra: string | null;
}
