import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

@Table({ tableName: 'organisations' })
export class Organisation extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare brand_id: number;
  @Column(DataType.INTEGER.UNSIGNED) declare owner_id: number | null;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column(DataType.STRING(2)) declare country: string | null;
  @Column(DataType.STRING(10)) declare language_code: string | null;
  @Column(DataType.STRING(64)) declare timezone: string | null;
  @Column(DataType.TEXT) declare notes: string | null;
}
