import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { fk, flag, id, ref, str, tableOptions, text, timestamp, timestamps } from './columns';

export const name = '010_selfservice';

const tinyint = (defaultValue = 0) => ({ type: DataTypes.TINYINT.UNSIGNED, allowNull: false, defaultValue });

/**
 * The self-service knowledge base: types, categories, tags, articles (with their links to all
 * three), article attachments, comments, the articles' search documents per locale, and the
 * generic `uploads` store (file contents deduplicated by SHA-256) that attachments point to.
 */
export async function up(q: QueryInterface): Promise<void> {
  // Files, stored once per content: anything that has attachments names an upload by its hash.
  await q.createTable('uploads', {
    id: id(), hash: { type: DataTypes.CHAR(64), allowNull: false, unique: true }, filename: str(255, false), mime: str(255, false),
    size: ref(), contents: { type: DataTypes.BLOB('long'), allowNull: false }, ...timestamps(),
  }, tableOptions);

  await q.createTable('selfservice_types', {
    id: id(), brand_id: fk('brands'), name: str(255, false), slug: str(255, false), description: text(),
    order: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    enabled: flag(1), protected: flag(0), internal: flag(0), content: tinyint(), view: tinyint(),
    icon: { ...str(64, false), defaultValue: 'fa-book' }, article_ordering: tinyint(), show_on_dashboard: flag(1),
    external_link: str(2048), ...timestamps(),
  }, tableOptions);
  // Slugs are unique per brand (the index also serves the brand_id filter).
  await q.addIndex('selfservice_types', ['brand_id', 'slug'], { unique: true, name: 'selfservice_types_brand_slug' });
  for (const c of ['enabled', 'internal', 'content', 'view', 'article_ordering', 'show_on_dashboard', 'order']) await q.addIndex('selfservice_types', [c]);

  await q.createTable('selfservice_tags', {
    id: id(), name: str(255, false), slug: str(255, false), ...timestamps(),
  }, tableOptions);
  // Articles name their tags by name: one tag per name (case-insensitive, by the collation).
  await q.addIndex('selfservice_tags', ['name'], { unique: true, name: 'name' });
  await q.addIndex('selfservice_tags', ['slug'], { unique: true, name: 'slug' });

  await q.createTable('selfservice_categories', {
    id: id(), type_id: fk('selfservice_types'), parent_id: fk('selfservice_categories', 'CASCADE', true),
    name: str(255, false), slug: str(255, false), public: flag(0),
    // Derived: 1 when every ancestor is public (a top-level category has none), kept up to date on writes.
    parent_public: flag(1), ...timestamps(),
  }, tableOptions);
  await q.addIndex('selfservice_categories', ['type_id', 'slug'], { unique: true, name: 'selfservice_categories_type_slug' });
  for (const c of ['parent_id', 'public', 'parent_public']) await q.addIndex('selfservice_categories', [c]);

  await q.createTable('articles', {
    id: id(), author_id: fk('users', 'SET NULL', true), title: str(255, false), slug: str(255, false), excerpt: str(255),
    text: text(false), published: flag(0), published_at: timestamp(), protected: flag(0), pinned: flag(0), ...timestamps(),
  }, tableOptions);
  for (const c of ['slug', 'published', 'published_at', 'protected', 'pinned', 'created_at', 'updated_at']) await q.addIndex('articles', [c]);
  await q.sequelize.query('ALTER TABLE articles ADD FULLTEXT INDEX articles_search (title, excerpt, text)');

  await q.createTable('article_categories', {
    article_id: { ...fk('articles'), primaryKey: true }, category_id: { ...fk('selfservice_categories'), primaryKey: true },
  }, tableOptions);
  await q.addIndex('article_categories', ['category_id']);
  // The types an article is in (those of its categories), with its view counter in each.
  await q.createTable('article_types', {
    article_id: { ...fk('articles'), primaryKey: true }, type_id: { ...fk('selfservice_types'), primaryKey: true },
    views: { type: DataTypes.INTEGER.UNSIGNED, allowNull: false, defaultValue: 0 },
  }, tableOptions);
  await q.addIndex('article_types', ['type_id']);
  await q.createTable('article_tags', {
    article_id: { ...fk('articles'), primaryKey: true }, tag_id: { ...fk('selfservice_tags'), primaryKey: true },
  }, tableOptions);
  await q.addIndex('article_tags', ['tag_id']);

  await q.createTable('article_attachments', {
    id: id(), article_id: fk('articles'),
    upload_hash: { type: DataTypes.CHAR(64), allowNull: false, references: { model: 'uploads', key: 'hash' }, onDelete: 'RESTRICT', onUpdate: 'CASCADE' },
    locale: str(10), original_name: str(255, false), ...timestamps(),
  }, tableOptions);
  await q.addIndex('article_attachments', ['article_id']);
  await q.addIndex('article_attachments', ['upload_hash']);

  await q.createTable('article_comments', {
    id: id(), article_id: fk('articles'), type_id: fk('selfservice_types', 'SET NULL', true), author_id: fk('users', 'SET NULL', true),
    name: str(255, false), text: text(false), parent_id: fk('article_comments', 'CASCADE', true), root_parent_id: ref(true),
    rating: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    status: tinyint(), notify_reply: flag(0), ...timestamps(),
  }, tableOptions);
  await q.addIndex('article_comments', ['article_id', 'status']);
  for (const c of ['status', 'created_at', 'updated_at']) await q.addIndex('article_comments', [c]);

  // What a reader of each locale sees of an article (its translations over its defaults), for the
  // FULLTEXT search with `lang`; rebuilt from the article and its translations on every write.
  await q.createTable('article_search', {
    article_id: { ...fk('articles'), primaryKey: true }, locale: { ...str(10, false), primaryKey: true },
    title: text(false), excerpt: text(), text: text(false),
  }, tableOptions);
  await q.addIndex('article_search', ['locale']);
  await q.sequelize.query('ALTER TABLE article_search ADD FULLTEXT INDEX article_search_text (title, excerpt, text)');
}

export async function down(q: QueryInterface): Promise<void> {
  for (const table of [
    'article_search', 'article_comments', 'article_attachments', 'article_tags', 'article_types', 'article_categories', 'articles',
    'selfservice_categories', 'selfservice_tags', 'selfservice_types', 'uploads',
  ]) await q.dropTable(table);
}
