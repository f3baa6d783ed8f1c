import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** An additional email address of a user. */
@Table({ tableName: 'user_emails' })
export class UserEmail extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare user_id: number;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare email: string;
}
