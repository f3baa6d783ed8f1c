import { AutoIncrement, Column, DataType, Model, PrimaryKey, Table } from 'sequelize-typescript';

/** One row of the append-only event feed (events.ts writes it; its id is the feed's cursor). */
@Table({ tableName: 'events' })
export class DomainEvent extends Model {
  @PrimaryKey @AutoIncrement @Column(DataType.INTEGER.UNSIGNED) declare id: number;
  @Column({ type: DataType.STRING(64), allowNull: false }) declare name: string;
  /** JSON: ids and flags, never secrets. */
  @Column({ type: DataType.TEXT, allowNull: false }) declare payload: string;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare created_at: number;
}
