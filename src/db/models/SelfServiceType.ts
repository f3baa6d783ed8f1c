import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

/** A self-service type (knowledge base, announcements...) of a brand: articles, or an external link. */
@Table({ tableName: 'selfservice_types' })
export class SelfServiceType extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare brand_id: number;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare name: string;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare slug: string;
  @Column(DataType.TEXT) declare description: string | null;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare order: number;
  @Column(flag(1)) declare enabled: number;
  @Column(flag(0)) declare protected: number;
  @Column(flag(0)) declare internal: number;
  /** 0 articles, 1 external link. */
  @Column({ type: DataType.TINYINT.UNSIGNED, allowNull: false, defaultValue: 0 }) declare content: number;
  /** 0 hierarchical, 1 list. */
  @Column({ type: DataType.TINYINT.UNSIGNED, allowNull: false, defaultValue: 0 }) declare view: number;
  @Column({ type: DataType.STRING(64), allowNull: false, defaultValue: 'fa-book' }) declare icon: string;
  /** 0 alphabetical, 1 most popular, 2 most recent, 3 random. */
  @Column({ type: DataType.TINYINT.UNSIGNED, allowNull: false, defaultValue: 0 }) declare article_ordering: number;
  @Column(flag(1)) declare show_on_dashboard: number;
  @Column(DataType.STRING(2048)) declare external_link: string | null;
}
