import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/** A file attached to an article: the upload (by hash) under the name it was attached with. */
@Table({ tableName: 'article_attachments' })
export class ArticleAttachment extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare article_id: number;
  @Column({ type: DataType.CHAR(64), allowNull: false }) declare upload_hash: string;
  @Column(DataType.STRING(10)) declare locale: string | null;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare original_name: string;
}
