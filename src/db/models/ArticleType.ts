import { Column, DataType, Model, PrimaryKey, Table } from 'sequelize-typescript';

/** An article in a type (one of its categories' types), with its view counter there. */
@Table({ tableName: 'article_types' })
export class ArticleType extends Model {
  @PrimaryKey @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare article_id: number;
  @PrimaryKey @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare type_id: number;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false, defaultValue: 0 }) declare views: number;
}
