import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

/** A permission (seeded, read-only); `can_*` say which actions it covers (the API's `slug`). */
@Table({ tableName: 'permissions' })
export class Permission extends Entity {
  @Column({ type: DataType.STRING(64), allowNull: false }) declare code: string;
  @Column(DataType.INTEGER.UNSIGNED) declare inherit_id: number | null;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare module_id: number;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column(flag(1)) declare can_view: number;
  @Column(flag(0)) declare can_create: number;
  @Column(flag(0)) declare can_update: number;
  @Column(flag(0)) declare can_delete: number;
  @Column(DataType.TEXT) declare description: string | null;
}
