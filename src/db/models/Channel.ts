import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

/** Where tickets come from: Web, Email, API. Its settings are the `channel.<id>` settings scope. */
@Table({ tableName: 'channels' })
export class Channel extends Entity {
  @Column({ type: DataType.STRING(64), allowNull: false }) declare name: string;
  @Column(flag(1)) declare enabled: number;
  @Column(DataType.STRING(255)) declare class: string | null;
}
