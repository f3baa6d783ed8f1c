import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

export type CustomFieldKind = 'user' | 'organisation' | 'ticket';

/** A custom field of users, organisations or tickets (`kind`). */
@Table({ tableName: 'custom_fields' })
export class CustomField extends Entity {
  @Column({ type: DataType.STRING(16), allowNull: false }) declare kind: CustomFieldKind;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column(DataType.TEXT) declare description: string | null;
  /** 0 Boolean, 1 Checkbox, 2 Checklist, 3 Date, 4 Multiple Options, 5 Options, 6 Password, 7 Radio Buttons, 8 Text, 9 Textarea. */
  @Column({ type: DataType.TINYINT.UNSIGNED, allowNull: false }) declare type: number;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare order: number;
  @Column(flag(0)) declare required: number;
  @Column(flag(1)) declare public: number;
  @Column(flag(0)) declare encrypted: number;
  @Column(flag(0)) declare locked: number;
  @Column(flag(0)) declare purge: number;
  @Column(DataType.INTEGER.UNSIGNED) declare depends_on_field_id: number | null;
  @Column(DataType.INTEGER.UNSIGNED) declare depends_on_option_id: number | null;
}
