import { Column, DataType, Table } from 'sequelize-typescript';
import { Entity, flag } from '../entity';

/** An email address of a department; with IMAP settings it is a mailbox the mailbox worker polls. */
@Table({ tableName: 'department_emails' })
export class DepartmentEmail extends Entity {
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare department_id: number;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare brand_id: number;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare address: string;
  @Column({ type: DataType.TINYINT.UNSIGNED, allowNull: false, defaultValue: 0 }) declare type: number;
  @Column({ type: DataType.TINYINT.UNSIGNED, allowNull: false, defaultValue: 0 }) declare protocol: number;
  @Column(DataType.STRING(255)) declare server: string | null;
  @Column(DataType.STRING(255)) declare username: string | null;
  @Column(DataType.STRING(255)) declare password: string | null;
  @Column(DataType.INTEGER.UNSIGNED) declare port: number | null;
  @Column(DataType.STRING(8)) declare encryption: string | null;
  @Column(flag(0)) declare consume_all: number;
  @Column(flag(0)) declare delete_downloaded: number;
}
