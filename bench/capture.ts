/**
 * Records every statement the app sends while `work` runs, as the raw driver received it (SQL with
 * `?` placeholders and its values, after Sequelize built it), with the transaction connection it
 * ran on and the statements that were in flight together: the baseline server replays exactly
 * this. (`countQueries` counts the same statements; this also keeps their values and order.)
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Query = require('sequelize/lib/dialects/mariadb/query');

export interface Statement {
  sql: string;
  params?: unknown[];
  /** The transaction's connection (statements of one transaction share it), or null for the pool. */
  conn: string | null;
  /** Statements with the same wave started before any of them finished: the app ran them together. */
  wave: number;
}

let recording: Statement[] | null = null;
let completed = 0;
let lastWave = -1;
let lastCompleted = -1;

const original = Query.prototype.run;
Query.prototype.run = async function run(this: any, sql: string, parameters?: unknown[]) {
  if (recording) {
    if (completed !== lastCompleted) { lastWave++; lastCompleted = completed; }
    recording.push({ sql, params: parameters ? [...parameters] : undefined, conn: this.options?.transaction?.id ?? null, wave: lastWave });
  }
  try {
    return await original.call(this, sql, parameters);
  } finally {
    completed++;
  }
};

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
