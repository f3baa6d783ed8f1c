import { literal } from 'sequelize';
import type { Literal } from 'sequelize/types/utils';

/**
 * A SQL condition with bound values: `sqlCondition\`id IN (SELECT user_id FROM user_emails WHERE email = ${v})\``.
 * The values never enter the SQL text: each becomes a named replacement (`:b<n>`) that the query
 * carrying the condition passes to Sequelize (`replacements`), which binds it. This is how list
 * filters reach other tables (subqueries) in one query, whatever the size of the tables.
 */
export interface BoundCondition {
  readonly literal: Literal;
  readonly replacements: Record<string, unknown>;
}

let seq = 0;

export function sqlCondition(strings: TemplateStringsArray, ...values: unknown[]): BoundCondition {
  const { text, replacements } = compose(strings, values);
  return { literal: literal(`(${text})`), replacements };
}

/**
 * Like sqlCondition, for a piece of a statement that is not an expression (a select list, `x AS
 * name`, a CASE branch, a FROM clause): its text as written, not in parentheses.
 */
export function sqlFragment(strings: TemplateStringsArray, ...values: unknown[]): BoundCondition {
  const { text, replacements } = compose(strings, values);
  return { literal: literal(text), replacements };
}

function compose(strings: TemplateStringsArray, values: unknown[]): { text: string; replacements: Record<string, unknown> } {
  const replacements: Record<string, unknown> = {};
  let text = strings[0];
  values.forEach((value, i) => {
    if (isBound(value)) {
      // A condition inside a condition: its SQL goes in, its values stay bound.
      text += `${sqlOf(value)}${strings[i + 1]}`;
      Object.assign(replacements, value.replacements);
      return;
    }
    seq = (seq + 1) % 1_000_000_000;
    const name = `b${seq}`;
    replacements[name] = value;
    text += `:${name}${strings[i + 1]}`;
  });
  return { text, replacements };
}

export const isBound = (c: unknown): c is BoundCondition =>
  typeof c === 'object' && c !== null && 'literal' in c && 'replacements' in c;

const sqlOf = (c: BoundCondition) => (c.literal as unknown as { val: string }).val;

/** Several bound conditions that must all hold. */
export const allOf = (conditions: BoundCondition[]): BoundCondition => joined(conditions, ' AND ');

/** Bound fragments joined by `separator` (a select list, CASE branches): their SQL as written, their values bound. */
export function joined(items: BoundCondition[], separator = ', '): BoundCondition {
  return {
    literal: literal(items.map(sqlOf).join(separator)),
    replacements: Object.assign({}, ...items.map((c) => c.replacements)),
  };
}

/** Several bound conditions of which at least one must hold (none: nothing matches). */
export function anyOf(conditions: BoundCondition[]): BoundCondition {
  if (!conditions.length) return { literal: literal('(1 = 0)'), replacements: {} };
  return {
    literal: literal(`(${conditions.map(sqlOf).join(' OR ')})`),
    replacements: Object.assign({}, ...conditions.map((c) => c.replacements)),
  };
}

/**
 * SQL text written in the code (a column name, a table alias), to place in a `sqlCondition`:
 * never a value from a request, which is always bound.
 */
export const trusted = (sql: string): BoundCondition => ({ literal: literal(sql), replacements: {} });

/** The SQL text of a bound condition (its values stay named replacements): for a statement written by hand. */
export const sqlText = (c: BoundCondition): string => sqlOf(c);

/** Escapes LIKE wildcards so a search term is matched literally. */
export const likeContains = (value: string) => `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
