import { sqlCondition, type BoundCondition } from '../../db/sql';

/**
 * The article search: MariaDB FULLTEXT indexes, queried in boolean mode with the query bound (never
 * inlined). Over `articles (title, excerpt, search_text)` for the default content, and, with `lang`,
 * over `article_search (title, excerpt, text)`, which holds each article as a reader of that locale
 * sees it (translated fields over the defaults). Both hold the text as read, not its HTML
 * (content/html.ts readableText): markup and link addresses are not words of an article.
 */

/** InnoDB's shortest indexed word (`innodb_ft_min_token_size`, 3 by default): shorter ones are never found. */
const MIN_WORD = 3;
/** InnoDB's default stopwords of that length or more: never indexed, so never required. */
const STOPWORDS = new Set(['about', 'are', 'com', 'for', 'from', 'how', 'that', 'the', 'this', 'was', 'what', 'when', 'where', 'who', 'will', 'with', 'und', 'www']);
const MAX_WORDS = 32;
/**
 * A word as InnoDB's FULLTEXT parser reads it: letters, digits and `_` (`err_connection_refused`
 * is one indexed word, so `+err* +connection* +refused*` never found it).
 */
export const WORD = /[\p{L}\p{N}_]+/gu;

/**
 * The boolean-mode query of a user's term: every word required, as a word or the start of one
 * (`+pass* +reset*`). Operators in the term are not operators here: only letters, digits and `_`
 * make words (WORD). Null when no word is left to look for (`a`, `to be`).
 */
export function searchQuery(term: string): string | null {
  const words = [...new Set((term.toLowerCase().match(WORD) ?? [])
    .filter((w) => w.length >= MIN_WORD && !STOPWORDS.has(w)))].slice(0, MAX_WORDS);
  return words.length ? words.map((w) => `+${w}*`).join(' ') : null;
}

const locale = (lang: string) => lang.replace('-', '_');

/** The articles that match (the outer query is on `articles`). */
export function searchCondition(words: string, lang?: string): BoundCondition {
  const own = sqlCondition`MATCH (title, excerpt, search_text) AGAINST (${words} IN BOOLEAN MODE)`;
  if (!lang) return own;
  return sqlCondition`${own} OR id IN (SELECT article_id FROM article_search WHERE locale = ${locale(lang)} AND MATCH (title, excerpt, text) AGAINST (${words} IN BOOLEAN MODE))`;
}

/** Relevance, for the order: the better of the default content's and the locale's document's. */
export function searchScore(words: string, lang?: string): BoundCondition {
  const own = sqlCondition`MATCH (title, excerpt, search_text) AGAINST (${words} IN BOOLEAN MODE)`;
  if (!lang) return own;
  return sqlCondition`GREATEST(${own}, IFNULL((SELECT MATCH (s.title, s.excerpt, s.text) AGAINST (${words} IN BOOLEAN MODE)
    FROM article_search s WHERE s.article_id = \`Article\`.\`id\` AND s.locale = ${locale(lang)}), 0))`;
}
