import { AutoIncrement, Column, DataType, Model, PrimaryKey, Table } from 'sequelize-typescript';

export type EmailScope = 'operator' | `brand:${number}`;

/** Where an email address must be unique: the user's brand, or the operators of the help desk. */
export const emailScope = (type: 'user' | 'operator', brandId: number | null): EmailScope =>
  (type === 'operator' ? 'operator' : `brand:${brandId ?? 0}`);

/**
 * An email address a person holds: the main address of a user or operator (user_email_id null)
 * or an additional one. UNIQUE (email, scope) makes an address one person's per brand (users) or
 * across the help desk (operators). Written by database triggers on users and user_emails
 * (migration 003), never by the application: it only reads it.
 */
@Table({ tableName: 'person_emails' })
export class PersonEmail extends Model {
  @PrimaryKey @AutoIncrement @Column(DataType.INTEGER.UNSIGNED) declare id: number;
  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false }) declare user_id: number;
  @Column(DataType.INTEGER.UNSIGNED) declare user_email_id: number | null;
  @Column({ type: DataType.STRING(20), allowNull: false }) declare scope: EmailScope;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare email: string;
}
