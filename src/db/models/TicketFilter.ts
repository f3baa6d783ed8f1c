import { AutoIncrement, Column, DataType, Model, PrimaryKey, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

/** A saved ticket filter: private to its owner (`user_id`), or shared with all or some operator groups. */
@Table({ tableName: 'ticket_filters' })
export class TicketFilter extends Entity {
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column(DataType.INTEGER.UNSIGNED) declare user_id: number | null;
  @Column(flag(1)) declare all_groups: number;
  /** 0: every condition group must match; 1: any group. */
  @Column({ type: DataType.TINYINT.UNSIGNED, allowNull: false, defaultValue: 0 }) declare condition_group_type: number;
}

/** One condition of a filter, in its group (`group_no`; the group's `group_type` 0 all, 1 any). */
@Table({ tableName: 'ticket_filter_conditions' })
export class TicketFilterCondition extends Model {
  @PrimaryKey @AutoIncrement @Column(DataType.INTEGER.UNSIGNED) declare id: number;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare filter_id: number;
  @Column({ type: DataType.SMALLINT.UNSIGNED, allowNull: false }) declare group_no: number;
  @Column({ type: DataType.TINYINT.UNSIGNED, allowNull: false, defaultValue: 0 }) declare group_type: number;
  @Column({ type: DataType.SMALLINT.UNSIGNED, allowNull: false }) declare position: number;
  @Column({ type: DataType.STRING(32), allowNull: false }) declare item: string;
  @Column({ type: DataType.STRING(16), allowNull: false }) declare operator: string;
  @Column(DataType.STRING(255)) declare value: string | null;
  /** The ticket custom field of a `customfield` condition. */
  @Column(DataType.INTEGER.UNSIGNED) declare field_id: number | null;
}
