import { AutoIncrement, Column, DataType, Model, PrimaryKey } from 'sequelize-typescript';

/**
 * Base of every table with an integer id and integer UNIX-second timestamps (the API's wire format,
 * stored as is). The timestamps are filled by the hooks in db/sequelize.ts.
 */
export abstract class Entity<T extends object = any, C extends object = any> extends Model<T, C> {
  @PrimaryKey
  @AutoIncrement
  @Column(DataType.INTEGER.UNSIGNED)
  declare id: number;

  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false })
  declare created_at: number;

  @Column({ type: DataType.INTEGER.UNSIGNED, allowNull: false })
  declare updated_at: number;
}

/**
 * A 0/1 column: booleans are 1 or 0 in the database as on the wire. `flag` marks it for the
 * OpenAPI document (a 0/1 enum, not any integer); Sequelize keeps the option and ignores it.
 */
export const flag = (defaultValue: 0 | 1) => ({ type: DataType.TINYINT.UNSIGNED, allowNull: false, defaultValue, flag: true });

export const now = (): number => Math.floor(Date.now() / 1000);
