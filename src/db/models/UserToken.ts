import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** A single-use token sent by mail (for example email verification); only its hash is kept. */
@Table({ tableName: 'user_tokens' })
export class UserToken extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare user_id: number;
  @Column({ type: DataType.STRING(32), allowNull: false }) declare purpose: string;
  @Column({ type: DataType.CHAR(64), allowNull: false }) declare token_hash: string;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare expires_at: number;
  @Column(DataType.INTEGER.UNSIGNED) declare used_at: number | null;
}
