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
  @Column({ type: DataType.BLOB('long'), allowNull: false }) declare contents: Buffer;
}
