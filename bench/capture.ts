/**
 * Records every statement the app sends while `work` runs, as the raw driver received it (SQL with
 * `?` placeholders and its values, after Sequelize built it), with the transaction connection it
 * ran on and the statements that were in flight together: the baseline server replays exactly
 * this. (`countQueries` counts the same statements; this also keeps their values and order.) The
 * SELECTs the app sends the driver itself (src/db/select.ts) are recorded as they go to it: their
 * values as given, by name when the statement's placeholders are `:name` ones (`named`).
 */
import { observeSelects } from '../src/db/select';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Query = require('sequelize/lib/dialects/mariadb/query');

export interface Statement {
  sql: string;
  params?: unknown[] | Record<string, unknown>;
  /** `params` fill `:name` placeholders (the driver's `namedPlaceholders`), not `?` ones. */
  named?: boolean;
  /** The transaction's connection (statements of one transaction share it), or null for the pool. */
  conn: string | null;
  /** Statements with the same wave started before any of them finished: the app ran them together. */
  wave: number;
}

/** A leading `SET STATEMENT … FOR `: optimiser switches a statement runs under (src/db/load.ts). */
const SWITCHES = /^SET STATEMENT (?:'[^']*'|[^'])*? FOR /;

/** A statement's SQL without the switches it runs under. */
export const withoutSwitches = (sql: string): string => sql.replace(SWITCHES, '');

/** The EXPLAIN of a statement's SQL, under the switches it runs under. */
export const explainOf = (sql: string): string => {
  const switches = SWITCHES.exec(sql)?.[0] ?? '';
  return `${switches}EXPLAIN ${sql.slice(switches.length)}`;
};

let recording: Statement[] | null = null;
let completed = 0;
let lastWave = -1;
let lastCompleted = -1;

function record(statement: Omit<Statement, 'wave'>) {
  if (!recording) return;
  if (completed !== lastCompleted) { lastWave++; lastCompleted = completed; }
  recording.push({ ...statement, wave: lastWave });
}

const original = Query.prototype.run;
Query.prototype.run = async function run(this: any, sql: string, parameters?: unknown[]) {
  record({ sql, params: parameters ? [...parameters] : undefined, conn: this.options?.transaction?.id ?? null });
  try {
    return await original.call(this, sql, parameters);
  } finally {
    completed++;
  }
};

observeSelects({
  started(sql, values, transaction) {
    const named = !Array.isArray(values);
    record({ sql, params: named ? { ...values } : [...(values as unknown[])], named, conn: transaction });
  },
  finished() { completed++; },
});

export async function capture<T>(work: () => Promise<T>): Promise<{ result: T; statements: Statement[] }> {
  recording = [];
  lastWave = -1;
  lastCompleted = -1;
  try {
    const result = await work();
    return { result, statements: recording };
  } finally {
    recording = null;
  }
}
