import { AutoIncrement, Column, DataType, Model, PrimaryKey, Table } from 'sequelize-typescript';

/** A POST sent with an Idempotency-Key (http/idempotency.ts): claimed with its work, then its response. */
@Table({ tableName: 'idempotency_keys' })
export class IdempotencyKey extends Model {
  @PrimaryKey @AutoIncrement @Column(DataType.INTEGER.UNSIGNED) declare id: number;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare token_id: number;
  /** SHA-256 of the key (the key itself may be anything the client chose). */
  @Column({ type: DataType.CHAR(64), allowNull: false }) declare key_hash: string;
  /** SHA-256 of the method, path and body. */
  @Column({ type: DataType.CHAR(64), allowNull: false }) declare fingerprint: string;
  @Column({ type: DataType.STRING(2048), allowNull: false }) declare path: string;
  @Column(DataType.SMALLINT.UNSIGNED) declare status_code: number | null;
  @Column(DataType.TEXT) declare response: string | null;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare created_at: number;
  @Column(DataType.INTEGER.UNSIGNED) declare completed_at: number | null;
}
