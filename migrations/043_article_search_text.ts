import { QueryTypes, type QueryInterface } from 'sequelize';
import { readableText } from '../src/content/html';

export const name = '043_article_search_text';

/** Articles read and written per statement while the readable texts are filled in. */
const BATCH = 500;

/**
 * The article search reads the text as a reader sees it, not its HTML: `articles.search_text`
 * (src/content/html.ts readableText: no tags, attributes or link addresses), and the FULLTEXT
 * index `articles_search` over `(title, excerpt, search_text)` in place of `(title, excerpt, text)`;
 * `article_search.text` (the translated documents) holds the readable text too. A search for
 * `strong` or `href` found every article with bold text or a link.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE articles ADD COLUMN search_text MEDIUMTEXT NULL AFTER text');
  await fill(q, 'articles', 'id', 'text', 'search_text');
  await fill(q, 'article_search', 'article_id', 'text', 'text');
  await q.sequelize.query('ALTER TABLE articles DROP INDEX articles_search, ADD FULLTEXT INDEX articles_search (title, excerpt, search_text)');
}

/** Sets `to` to the readable text of `from`, a batch of rows at a time in key order. */
async function fill(q: QueryInterface, table: string, key: string, from: string, to: string): Promise<void> {
  for (let after = 0; ;) {
    const rows = await q.sequelize.query<Record<string, any>>(
      `SELECT DISTINCT ${key} AS k FROM ${table} WHERE ${key} > :after ORDER BY ${key} LIMIT :n`, { replacements: { after, n: BATCH }, type: QueryTypes.SELECT },
    );
    if (!rows.length) return;
    const keys = rows.map((r) => Number(r.k));
    const docs = await q.sequelize.query<Record<string, any>>(
      `SELECT ${key} AS k${table === 'article_search' ? ', locale' : ''}, ${from} AS v FROM ${table} WHERE ${key} IN (:keys)`, { replacements: { keys }, type: QueryTypes.SELECT },
    );
    for (const d of docs) {
      const readable = readableText(String(d.v));
      if (readable === d.v && from === to) continue;
      await q.sequelize.query(`UPDATE ${table} SET ${to} = :readable WHERE ${key} = :k${table === 'article_search' ? ' AND locale = :locale' : ''}`, {
        replacements: { readable, k: d.k, locale: d.locale }, type: QueryTypes.UPDATE,
      });
    }
    after = keys[keys.length - 1];
  }
}

/** The HTML of the translated documents is not kept: they are rebuilt from the translations on the next write of each article. */
export async function down(q: QueryInterface): Promise<void> {
  await q.sequelize.query('ALTER TABLE articles DROP INDEX articles_search, ADD FULLTEXT INDEX articles_search (title, excerpt, text)');
  await q.sequelize.query('ALTER TABLE articles DROP COLUMN search_text');
}
