import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

/**
 * A canned response: text with merge fields (`{{ user.firstname }}`) kept as written. Visible to
 * every operator when `public`, else to its `user_id` only; to the groups of
 * `canned_response_groups`, or every group when `all_groups`.
 */
@Table({ tableName: 'canned_responses' })
export class CannedResponse extends Entity {
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column({ type: DataType.TEXT('medium'), allowNull: false }) declare text: string;
  @Column(DataType.INTEGER.UNSIGNED) declare category_id: number | null;
  @Column(DataType.INTEGER.UNSIGNED) declare user_id: number | null;
  @Column(flag(1)) declare public: number;
  @Column(flag(1)) declare all_groups: number;
  @Column(DataType.INTEGER.UNSIGNED) declare department_id: number | null;
  @Column(DataType.INTEGER.UNSIGNED) declare priority_id: number | null;
  @Column(DataType.INTEGER.UNSIGNED) declare status_id: number | null;
}
