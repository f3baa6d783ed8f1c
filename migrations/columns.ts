import { DataTypes, type ModelAttributeColumnOptions, type QueryInterface } from 'sequelize';

/** Column shapes, and steps, shared by the migrations. */
export const id = (): ModelAttributeColumnOptions => ({ type: DataTypes.INTEGER.UNSIGNED, autoIncrement: true, primaryKey: true });
export const ref = (allowNull = false): ModelAttributeColumnOptions => ({ type: DataTypes.INTEGER.UNSIGNED, allowNull });
export const flag = (defaultValue: 0 | 1): ModelAttributeColumnOptions => ({ type: DataTypes.TINYINT.UNSIGNED, allowNull: false, defaultValue });
export const str = (length = 255, allowNull = true): ModelAttributeColumnOptions => ({ type: DataTypes.STRING(length), allowNull });
/** Free text: MEDIUMTEXT, since TEXT's 65,535 bytes hold as few as 16,383 four-byte characters. */
export const text = (allowNull = true): ModelAttributeColumnOptions => ({ type: DataTypes.TEXT('medium'), allowNull });
export const timestamp = (allowNull = true): ModelAttributeColumnOptions => ({ type: DataTypes.INTEGER.UNSIGNED, allowNull });
export const timestamps = () => ({ created_at: timestamp(false), updated_at: timestamp(false) });

/**
 * Foreign key column that follows its parent on delete. Its `ON UPDATE CASCADE` is what the
 * migrations up to 098 made; 099 makes every key to a primary key RESTRICT on update (an update
 * of the parent opened each cascading table, with its triggers): a later key passes
 * `onUpdate: 'RESTRICT'`.
 */
export const fk = (table: string, onDelete: 'CASCADE' | 'SET NULL' | 'RESTRICT' = 'CASCADE', allowNull = false): ModelAttributeColumnOptions => ({
  type: DataTypes.INTEGER.UNSIGNED,
  allowNull,
  references: { model: table, key: 'id' },
  onDelete,
  onUpdate: 'CASCADE',
});

export const tableOptions = { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci', engine: 'InnoDB' };

/**
 * A string compared exactly (binary collation): emails and domains. They are stored lower-cased by
 * the API, so comparing them byte for byte is case-insensitive yet accent-sensitive
 * (`alicé@` and `alice@` are two addresses), which the table's utf8mb4_unicode_ci is not.
 */
export const EXACT = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';
export const exact = (length = 255, allowNull = false): ModelAttributeColumnOptions => ({ type: `VARCHAR(${length}) ${EXACT}`, allowNull });

/**
 * Makes a table's `name` unique (as the column's collation compares it): names already shared keep
 * their first row's name, the others get their id appended first; then the unique key.
 */
export async function uniqueNames(q: QueryInterface, table: string, indexName: string): Promise<void> {
  await q.sequelize.query(`UPDATE ${table} r
    JOIN (SELECT MIN(id) AS keep, name FROM ${table} GROUP BY name HAVING COUNT(*) > 1) d ON r.name = d.name AND r.id <> d.keep
    SET r.name = LEFT(CONCAT(r.name, ' (', r.id, ')'), 255)`);
  await q.addIndex(table, ['name'], { unique: true, name: indexName });
}
