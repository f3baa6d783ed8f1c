import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

@Table({ tableName: 'custom_field_options' })
export class CustomFieldOption extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare field_id: number;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare value: string;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare order: number;
}
