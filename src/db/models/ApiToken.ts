import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** An API token; only the SHA-256 of the token is stored. */
@Table({ tableName: 'api_tokens' })
export class ApiToken extends Entity {
  @Column({ type: DataType.STRING(100), allowNull: false }) declare name: string;
  @Column({ type: DataType.CHAR(64), allowNull: false, unique: true }) declare token_hash: string;
  @Column(DataType.INTEGER.UNSIGNED) declare last_used_at: number | null;
  /** JSON array of scopes (auth/scopes.ts); null: full access. */
  @Column(DataType.STRING(1024)) declare scopes: string | null;
  @Column(DataType.INTEGER.UNSIGNED) declare expires_at: number | null;
}
