import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** The value of a custom field for one record of the field's kind (`owner_id`). */
@Table({ tableName: 'custom_field_values' })
export class CustomFieldValue extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare field_id: number;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare owner_id: number;
  @Column(DataType.TEXT) declare value: string | null;
}
