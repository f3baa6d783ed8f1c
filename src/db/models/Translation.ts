import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** The value of one translatable field of one record in one locale. */
@Table({ tableName: 'translations' })
export class Translation extends Entity {
  @Column({ type: DataType.STRING(32), allowNull: false }) declare record_type: string;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare record_id: number;
  @Column({ type: DataType.STRING(10), allowNull: false }) declare locale: string;
  @Column({ type: DataType.STRING(32), allowNull: false }) declare field: string;
  @Column({ type: DataType.TEXT, allowNull: false }) declare value: string;
}
