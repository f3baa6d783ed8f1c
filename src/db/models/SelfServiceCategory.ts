import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

/** A category of a self-service type, in a tree (`parent_id` within the same type). */
@Table({ tableName: 'selfservice_categories' })
export class SelfServiceCategory extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare type_id: number;
  @Column(DataType.INTEGER.UNSIGNED) declare parent_id: number | null;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare slug: string;
  @Column(flag(0)) declare public: number;
  /** Derived: 1 when every ancestor is public. */
  @Column(flag(1)) declare parent_public: number;
}
