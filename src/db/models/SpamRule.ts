import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

@Table({ tableName: 'spam_rules' })
export class SpamRule extends Entity {
  @Column({ type: DataType.TEXT, allowNull: false }) declare text: string;
  @Column(flag(1)) declare event_message: number;
  @Column(flag(1)) declare event_comment: number;
  /** 0 content, 1 sender, 2 content and sender. */
  @Column({ type: DataType.TINYINT.UNSIGNED, allowNull: false }) declare type: number;
}
