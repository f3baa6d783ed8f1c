import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

/** A self-service article; its categories, types and tags are link tables. */
@Table({ tableName: 'articles' })
export class Article extends Entity {
  /** An operator; null once that operator is deleted. */
  @Column(DataType.INTEGER.UNSIGNED) declare author_id: number | null;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare title: string;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare slug: string;
  @Column(DataType.STRING(255)) declare excerpt: string | null;
  @Column({ type: DataType.TEXT, allowNull: false }) declare text: string;
  /** `text` as a reader sees it (content/html.ts readableText), for the search's FULLTEXT index; never shown. */
  @Column(DataType.TEXT) declare search_text: string | null;
  @Column(flag(0)) declare published: number;
  @Column(DataType.INTEGER.UNSIGNED) declare published_at: number | null;
  @Column(flag(0)) declare protected: number;
  @Column(flag(0)) declare pinned: number;
}
