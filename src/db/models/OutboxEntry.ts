import { AutoIncrement, Column, DataType, Model, PrimaryKey, Table } from 'sequelize-typescript';

/** A side effect (a job) committed with its data; published to BullMQ after commit. */
@Table({ tableName: 'outbox' })
export class OutboxEntry extends Model {
  @PrimaryKey @AutoIncrement @Column(DataType.INTEGER.UNSIGNED) declare id: number;
  /** Random; with the id it makes the BullMQ job id (see queue/outbox.ts). */
  @Column({ type: DataType.CHAR(16), allowNull: false }) declare job_key: string;
  @Column({ type: DataType.STRING(32), allowNull: false }) declare queue: string;
  @Column({ type: DataType.STRING(64), allowNull: false }) declare name: string;
  /** JSON: ids only, never secrets. */
  @Column({ type: DataType.TEXT, allowNull: false }) declare payload: string;
  /** JSON: the job's BullMQ options from its definition (attempts, backoff, retention). */
  @Column(DataType.TEXT) declare options: string | null;
  @Column(DataType.INTEGER.UNSIGNED) declare published_at: number | null;
  @Column(DataType.INTEGER.UNSIGNED) declare processed_at: number | null;
  /** When its job ran out of attempts. */
  @Column(DataType.INTEGER.UNSIGNED) declare failed_at: number | null;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare created_at: number;
}
