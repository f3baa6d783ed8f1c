import { Column, DataType, Model, PrimaryKey, Table } from 'sequelize-typescript';

/** An article as a reader of one locale sees it (translations over defaults): the search document. */
@Table({ tableName: 'article_search' })
export class ArticleSearch extends Model {
  @PrimaryKey @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare article_id: number;
  @PrimaryKey @Column({ type: DataType.STRING(10), allowNull: false }) declare locale: string;
  @Column({ type: DataType.TEXT, allowNull: false }) declare title: string;
  @Column(DataType.TEXT) declare excerpt: string | null;
  @Column({ type: DataType.TEXT, allowNull: false }) declare text: string;
}
