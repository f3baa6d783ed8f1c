import { ValidationError } from '../../../errors';
import { Joi, oneLine } from '../../../lib/validation';
import { allOf, anyOf, sqlCondition, trusted, type BoundCondition } from '../../../db/sql';
import { WORD, searchQuery } from '../../../selfservice/article/search';
import { departmentTree, unassigned } from '../conditions';
import { departmentsBelow } from '../departmentsBelow';
import { searchEngine } from './engine';
import { SearchSyntaxError, isPlainWords, parseSearch, type Comparison, type Term } from './parse';

/**
 * The ticket search language (./parse.ts) as one SQL condition over `tickets` with every value
 * bound. Field values that are names (a status, a tag) are matched in subqueries, so a search is
 * one statement whatever it names; a name that exists nowhere finds nothing. A `department:` id
 * is that department's ids and those below it, from the tree each process keeps
 * (../departmentsBelow.ts): as a recursive subquery (still a name's) the optimiser could not size
 * it, so a page in another order walked that order's index testing every ticket (the tickets
 * export of `department:<a department of 1,000>` at a million tickets: 3.6 s for a page of 1,000,
 * 111 ms through the department's index).
 */

const DAY = 86400;

/** Tickets whose number is this, or that a ticket of this number was merged into (one unique-key look-up). */
/** A `search` parameter in the ticket search language: one line of at most 1,000 characters (the list, the export, bulk changes). */
export const ticketSearchText = () => oneLine(Joi.string().trim().max(1000));

export const numberCondition = (n: string) => sqlCondition`id IN (SELECT COALESCE(merged_into_id, id) FROM tickets WHERE number = ${n})`;

/**
 * Words (and phrases) in the subject or the messages, or the ticket number: today's `search`, as
 * the configured engine finds them (./engine.ts: InnoDB's FULLTEXT or Mroonga).
 */
const fullText = (term: string, booleanQuery: string): BoundCondition => searchEngine().textCondition(term, booleanQuery);

/** Plain words as before the language: every word required (`+word*`); none long enough: the number. */
export function wordsCondition(term: string): BoundCondition {
  const words = searchQuery(term);
  return words ? fullText(term, words) : numberCondition(term);
}

/** A phrase in boolean mode: its words in order (only letters, digits and `_`: WORD; the quotes are ours). */
function phraseQuery(term: Term): string {
  const words = (term.kind === 'text' ? term.text : '').match(WORD) ?? [];
  if (!words.length) throw new SearchSyntaxError(term.position, 'the phrase holds no word');
  return `+"${words.join(' ').toLowerCase()}"`;
}

export const isId = (v: string) => /^\d{1,10}$/.test(v);

/** What a name in a search can be: a status's, priority's, department's or tag's, or a person's address. */
export type NamedKind = 'status' | 'priority' | 'department' | 'tag' | 'person';

/**
 * The ids (as `id`) a name or a person's address stands for, as a statement: the one way the
 * search reads a name (here, ./listed.ts, ./asListFilters.ts), matched as the database compares
 * names; addresses are stored lower-cased.
 */
export function namedIds(kind: NamedKind, value: string): BoundCondition {
  switch (kind) {
    case 'status': return sqlCondition`SELECT id FROM ticket_statuses WHERE name = ${value}`;
    case 'priority': return sqlCondition`SELECT id FROM ticket_priorities WHERE name = ${value}`;
    case 'department': return sqlCondition`SELECT id FROM departments WHERE name = ${value}`;
    case 'tag': return sqlCondition`SELECT id FROM ticket_tags WHERE name = ${value}`;
    case 'person': return sqlCondition`SELECT user_id AS id FROM person_emails WHERE email = ${value.toLowerCase()}`;
    default: throw new Error(`unknown kind of name ${String(kind)}`);
  }
}

/** The departments a `department:` value names: by id or by name (a statement selecting their ids). */
export const departmentRoots = (v: string): BoundCondition => (isId(v) ? sqlCondition`SELECT ${Number(v)}` : namedIds('department', v));

function byIdOrName(value: string, column: 'status_id' | 'priority_id', byName: (name: string) => BoundCondition): BoundCondition {
  return isId(value) ? sqlCondition`${trusted(column)} = ${Number(value)}` : byName(value);
}

/** A person by id or by any of their addresses. */
const personIds = (value: string) => (isId(value)
  ? sqlCondition`SELECT ${Number(value)}`
  : namedIds('person', value));

/** UNIX seconds, or the start of a UTC day `YYYY-MM-DD` (with the day's length). */
export function moment(term: Term & { kind: 'field' }): { at: number; span: number } {
  if (/^\d{1,10}$/.test(term.value)) return { at: Number(term.value), span: 1 };
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(term.value);
  const at = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / 1000 : NaN;
  if (!m || Number.isNaN(at) || new Date(at * 1000).toISOString().slice(0, 10) !== term.value) {
    throw new SearchSyntaxError(term.position, `${term.field} takes a date (YYYY-MM-DD) or UNIX seconds, not '${term.value}'`);
  }
  return { at, span: DAY };
}

/** A `created` term as bounds on `created_at`: at or after (`>=`), before (`<`). */
export function createdRanges(term: Term & { kind: 'field' }): Array<['>=' | '<', number]> {
  const { at, span } = moment(term);
  const ranges: Record<Comparison, Array<['>=' | '<', number]>> = {
    ':': [['>=', at], ['<', at + span]], '>': [['>=', at + span]], '>=': [['>=', at]], '<': [['<', at]], '<=': [['<', at + span]],
  };
  return ranges[term.op];
}

/**
 * A `created` term: its bounds joined with AND, in parentheses (as every condition here is), so
 * that an exclusion negates the whole term (`NOT (a AND b)`, every ticket not created that day)
 * and OR joins it as one.
 */
const createdCondition = (term: Term & { kind: 'field' }): BoundCondition =>
  sqlCondition`${allOf(createdRanges(term).map(([op, value]) => sqlCondition`created_at ${trusted(op)} ${value}`))}`;

/** An exclusion: the whole condition negated, whatever it is made of. */
const not = (c: BoundCondition): BoundCondition => sqlCondition`NOT (${c})`;

function fieldCondition(term: Term & { kind: 'field' }, departments: DepartmentTerms): BoundCondition {
  const v = term.value;
  switch (term.field) {
    case 'status':
      return byIdOrName(v, 'status_id', (name) => sqlCondition`status_id IN (${namedIds('status', name)})`);
    case 'priority':
      return byIdOrName(v, 'priority_id', (name) => sqlCondition`priority_id IN (${namedIds('priority', name)})`);
    case 'department': {
      // The department and every department below it, as the list's `department` filter. A name
      // stays a subquery (read first, it would be a statement more for every search that names one).
      const ids = departments.get(v);
      return ids ? sqlCondition`department_id IN (${ids})` : sqlCondition`department_id IN (${departmentTree(departmentRoots(v))})`;
    }
    case 'tag': {
      const tags = isId(v) ? sqlCondition`SELECT ${Number(v)}` : namedIds('tag', v);
      return sqlCondition`id IN (SELECT ticket_id FROM ticket_tag_links WHERE tag_id IN (${tags}))`;
    }
    case 'user':
      return sqlCondition`user_id IN (${personIds(v)})`;
    case 'assigned':
      if (v.toLowerCase() === 'none') return unassigned();
      return sqlCondition`id IN (SELECT ticket_id FROM ticket_assignees WHERE user_id IN (${personIds(v)}))`;
    case 'created':
      return createdCondition(term);
    case 'number':
      return numberCondition(v);
    default:
      throw new Error(`unknown search field ${String(term.field)}`);
  }
}

/** The departments (with those below them) of each `department:` value of a search that is an id (a name: none). */
type DepartmentTerms = ReadonlyMap<string, number[]>;

async function departmentTerms(query: Term[][]): Promise<DepartmentTerms> {
  const ids = [...new Set(query.flat().flatMap((t) => (t.kind === 'field' && t.field === 'department' && isId(t.value) ? [t.value] : [])))];
  return new Map(await Promise.all(ids.map(async (v) => [v, await departmentsBelow([Number(v)])] as const)));
}

function groupCondition(terms: Term[], departments: DepartmentTerms): BoundCondition {
  const parts: BoundCondition[] = [];
  const words = terms.filter((t) => t.kind === 'text' && !t.phrase && !t.negated).map((t) => (t.kind === 'text' ? t.text : ''));
  const phrases = terms.filter((t) => t.kind === 'text' && t.phrase && !t.negated);
  if (phrases.length) {
    // Words and phrases together: each required of one subject or one message.
    const wordQuery = searchQuery(words.join(' ')) ?? '';
    parts.push(fullText(words.join(' '), [wordQuery, ...phrases.map(phraseQuery)].filter(Boolean).join(' ')));
  } else if (words.length) {
    parts.push(wordsCondition(words.join(' ')));
  }
  for (const t of terms) {
    if (t.kind === 'field') parts.push(t.negated ? not(fieldCondition(t, departments)) : fieldCondition(t, departments));
    else if (t.negated) parts.push(not(t.phrase ? fullText(t.text, phraseQuery(t)) : wordsCondition(t.text)));
  }
  return parts.length === 1 ? parts[0] : sqlCondition`${allOf(parts)}`;
}

/**
 * The condition of a search. 422 (`The search is invalid at position N: ...`) when it does not
 * parse. Plain words only: exactly the FULLTEXT search that came before the language.
 */
export async function ticketSearchCondition(search: string): Promise<BoundCondition> {
  try {
    const query = parseSearch(search);
    if (!query.length) return sqlCondition`1 = 1`;
    if (isPlainWords(query)) return wordsCondition(search);
    const departments = await departmentTerms(query);
    return query.length === 1 ? groupCondition(query[0], departments) : anyOf(query.map((group) => groupCondition(group, departments)));
  } catch (err) {
    if (err instanceof SearchSyntaxError) throw new ValidationError(err.message);
    throw err;
  }
}
