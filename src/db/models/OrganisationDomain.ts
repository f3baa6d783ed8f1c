import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity } from '../entity';

/**
 * Users with an email address at this domain join the organisation. `brand_id` is the
 * organisation's (a foreign key on (organisation_id, brand_id) keeps it so): a domain belongs to
 * one organisation per brand, UNIQUE (domain, brand_id).
 */
@Table({ tableName: 'organisation_domains' })
export class OrganisationDomain extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare organisation_id: number;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare brand_id: number;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare domain: string;
}
