import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** A stored file, once per content (`hash` is the SHA-256 of `contents`, hex). */
@Table({ tableName: 'uploads' })
export class Upload extends Entity {
  @Column({ type: DataType.CHAR(64), allowNull: false }) declare hash: string;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare filename: string;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare mime: string;
  /** Bytes. */
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare size: number;
  /** The bytes when `storage` is `database`; null when another store holds them. */
  @Column({ type: DataType.BLOB('long'), allowNull: true }) declare contents: Buffer | null;
  /** The store holding the bytes: `database` or `directory` (src/storage/stores.ts). */
  @Column({ type: DataType.STRING(16), allowNull: false, defaultValue: 'database' }) declare storage: string;
}
