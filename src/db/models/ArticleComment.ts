import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

/** A comment on an article; replies name their parent (and the thread's first comment). */
@Table({ tableName: 'article_comments' })
export class ArticleComment extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare article_id: number;
  @Column(DataType.INTEGER.UNSIGNED) declare type_id: number | null;
  @Column(DataType.INTEGER.UNSIGNED) declare author_id: number | null;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column({ type: DataType.TEXT, allowNull: false }) declare text: string;
  @Column(DataType.INTEGER.UNSIGNED) declare parent_id: number | null;
  @Column(DataType.INTEGER.UNSIGNED) declare root_parent_id: number | null;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare rating: number;
  /** 0 awaiting moderation, 1 published, 2 spam. */
  @Column({ type: DataType.TINYINT.UNSIGNED, allowNull: false, defaultValue: 0 }) declare status: number;
  @Column(flag(0)) declare notify_reply: number;
}
