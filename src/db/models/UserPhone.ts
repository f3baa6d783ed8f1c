import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** A phone number of a user or operator, in E.164. */
@Table({ tableName: 'user_phones' })
export class UserPhone extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare user_id: number;
  @Column({ type: DataType.STRING(20), allowNull: false }) declare number: string;
}
