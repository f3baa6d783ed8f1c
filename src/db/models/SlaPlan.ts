import { Column, DataType, Model, PrimaryKey, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

/** An SLA plan: reply and resolution targets per priority, on the calendar clock or in business hours. */
@Table({ tableName: 'sla_plans' })
export class SlaPlan extends Entity {
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column(DataType.TEXT) declare description: string | null;
  @Column(flag(1)) declare enabled: number;
  /** 0: 24/7; 1: only inside the schedule. */
  @Column(flag(0)) declare business_hours: number;
  /** IANA zone of the schedule; null: the core setting default_timezone. */
  @Column(DataType.STRING(64)) declare timezone: string | null;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare order: number;
}

/** One weekday's working window of a plan, in minutes after local midnight. */
@Table({ tableName: 'sla_plan_schedules' })
export class SlaPlanSchedule extends Model {
  @PrimaryKey @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare plan_id: number;
  /** 0 Sunday ... 6 Saturday. */
  @PrimaryKey @Column({ type: DataType.TINYINT.UNSIGNED, allowNull: false }) declare day: number;
  @Column({ type: DataType.SMALLINT.UNSIGNED, allowNull: false }) declare start_minute: number;
  @Column({ type: DataType.SMALLINT.UNSIGNED, allowNull: false }) declare end_minute: number;
}

/** A plan's targets for one priority, in minutes (null: none). */
@Table({ tableName: 'sla_plan_targets' })
export class SlaPlanTarget extends Model {
  @PrimaryKey @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare plan_id: number;
  @PrimaryKey @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare priority_id: number;
  @Column(DataType.INTEGER.UNSIGNED) declare first_reply: number | null;
  @Column(DataType.INTEGER.UNSIGNED) declare resolution: number | null;
}
