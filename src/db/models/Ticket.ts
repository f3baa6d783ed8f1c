import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

/**
 * A ticket. `number` is unique (the department's or the global format); `cc` is a JSON array of
 * addresses; `deleted_at` is set while it is in the trash; `merged_into_id` names the ticket it
 * was merged into (its messages moved there, and its number still leads there).
 */
@Table({ tableName: 'tickets' })
export class Ticket extends Entity {
  @Column({ type: DataType.STRING(64), allowNull: false }) declare number: string;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare department_id: number;
  @Column(DataType.INTEGER.UNSIGNED) declare department_email_id: number | null;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare brand_id: number;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare channel_id: number;
  /** The user who opened it; an operator for an internal ticket. */
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare user_id: number;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare status_id: number;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare priority_id: number;
  @Column(DataType.INTEGER.UNSIGNED) declare sla_plan_id: number | null;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare subject: string;
  /** When the first operator reply is due (SLA). */
  @Column(DataType.INTEGER.UNSIGNED) declare reply_due_time: number | null;
  /** When the resolution is due (SLA). */
  @Column(DataType.INTEGER.UNSIGNED) declare resolve_due_time: number | null;
  /** The due time that applies: the reply's until an operator first replies, then the resolution's. */
  @Column(DataType.INTEGER.UNSIGNED) declare due_time: number | null;
  /** The first operator reply (not a note, not a draft). */
  @Column(DataType.INTEGER.UNSIGNED) declare first_reply_time: number | null;
  /** The last reply (not a note, not a draft) and who wrote it (0 operator, 1 user). */
  @Column(DataType.INTEGER.UNSIGNED) declare last_reply_time: number | null;
  @Column(DataType.TINYINT.UNSIGNED) declare last_reply_by: number | null;
  @Column(DataType.INTEGER.UNSIGNED) declare resolved_time: number | null;
  @Column(DataType.INTEGER.UNSIGNED) declare reopened_time: number | null;
  /** JSON array of addresses. */
  @Column(DataType.TEXT) declare cc: string | null;
  @Column(flag(0)) declare locked: number;
  /** 1 on a ticket other tickets were merged into. */
  @Column(flag(0)) declare merged: number;
  @Column(flag(0)) declare internal: number;
  @Column(DataType.INTEGER.UNSIGNED) declare merged_into_id: number | null;
  /** 40 hex characters: the user's access to the ticket on the frontend. */
  @Column({ type: DataType.CHAR(40), allowNull: false }) declare token: string;
  @Column(DataType.INTEGER.UNSIGNED) declare deleted_at: number | null;
}
