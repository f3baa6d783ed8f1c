import http from 'node:http';
import https from 'node:https';
import { config } from '../../../config';
import { FILTER_COLUMNS } from './columns';
import { gqtpExchange } from './gqtp';

/**
 * The Groonga server of SEARCH_ENGINE=groonga: its commands, over GQTP (`gqtp://`, `groonga -s
 * --protocol gqtp`: connections kept open, ./gqtp.ts) or HTTP (`http://`, `https://`: `groonga
 * -s --protocol http`, or a proxy in front of it), and the tables this help desk keeps there.
 * Several help desks (or test runs) may share a server: each keeps its tables under its
 * database's name.
 */

/** A command's answer may take this long (a search of a common word at a million tickets: about 0.1 s). */
const TIMEOUT_MS = 30_000;

/** Groonga's answer over HTTP: a header (return code, start, elapsed, message on error), then the body. */
type Answer<T> = [[number, number, number, string?], T];

// Connections are kept for a server that keeps them (groonga-httpd, a proxy); Groonga's own HTTP
// server closes each after its answer. node:http rather than fetch: a third of the CPU per
// command (measured: 0.56 ms against 1.68 for a search, 16 at a time).
const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/** One HTTP exchange with the server: its status and body. */
function exchange(url: URL, body: string | undefined): Promise<{ status: number; text: string }> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, {
      method: body === undefined ? 'GET' : 'POST',
      agent: agents[url.protocol as keyof typeof agents],
      headers: body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The server's answer to a command was an error (not a failure to reach it). */
class GroongaAnswerError extends Error {}

/** A command over HTTP: GET `/d/<name>?<params>`, or a POST of the values (`load`). */
async function overHttp<T>(url: URL, name: string, values: string | undefined): Promise<T> {
  const res = await exchange(url, values);
  let answer: Answer<T>;
  try {
    answer = JSON.parse(res.text) as Answer<T>;
  } catch {
    throw new GroongaAnswerError(`Groonga ${name}: HTTP ${res.status}, not a Groonga answer: ${res.text.slice(0, 200)}`);
  }
  const [rc, , , message] = answer[0];
  if (rc !== 0) throw new GroongaAnswerError(`Groonga ${name}: ${message ?? `return code ${rc}`}`);
  return answer[1];
}

/** A command over GQTP, in its URI form (the values of a `load` as its `values` parameter): the answer is the body alone, or the error's message. */
async function overGqtp<T>(url: URL, name: string, values: string | undefined): Promise<T> {
  if (values !== undefined) url.searchParams.set('values', values);
  const { status, text } = await gqtpExchange(url.hostname, Number(url.port || 10043), `/d/${name}${url.search}`, TIMEOUT_MS);
  if (status !== 0) throw new GroongaAnswerError(`Groonga ${name}: ${text || `return code ${status}`}`);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new GroongaAnswerError(`Groonga ${name}: not a Groonga answer: ${text.slice(0, 200)}`);
  }
}

/**
 * Runs a Groonga command with these parameters (and `values`, JSON, for a `load`). Returns the
 * answer's body; throws when the server cannot be reached or answers an error.
 */
export async function groongaCommand<T = unknown>(name: string, params: Record<string, string | number>, values?: unknown): Promise<T> {
  const base = config().searchGroongaUrl;
  const url = new URL(`d/${name}`, base.endsWith('/') ? base : `${base}/`);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));
  const json = values === undefined ? undefined : JSON.stringify(values);
  try {
    return await (url.protocol === 'gqtp:' ? overGqtp<T>(url, name, json) : overHttp<T>(url, name, json));
  } catch (err) {
    const e = err as Error & { code?: string };
    if (e instanceof GroongaAnswerError) throw e;
    throw new Error(`The Groonga server at ${url.protocol}//${url.host} (SEARCH_GROONGA_URL) did not answer ${name}: ${e.code ?? e.message}`);
  }
}

/** This help desk's tables on the server: named after its database (Groonga names: letters, digits, `_`). */
export function groongaTables(): { documents: string; terms: string; filterWords: string; state: string } {
  const prefix = `helpdesk_${config().database.name.replace(/[^0-9A-Za-z_]/g, '_')}`;
  return { documents: `${prefix}_tickets`, terms: `${prefix}_terms`, filterWords: `${prefix}_filter_words`, state: `${prefix}_state` };
}

/** A table or a column of the schema, and the command that makes it. */
interface Part { table: string; column?: string; command: 'table_create' | 'column_create'; params: Record<string, string> }

/**
 * One document per listed ticket (key: its id; its text, the ticket's columns a search may be
 * narrowed by, and the same values as words: ./filterStart.ts), the text's index (TokenBigram,
 * NormalizerAuto: as Mroonga's, so that both engines find the same words), the index of the
 * filter words (TokenDelimit: one word per value), and the state (the index's position in the
 * tickets' change stream). In order: a column after its table, an index after its source.
 */
function schema(t: ReturnType<typeof groongaTables>): Part[] {
  const table = (name: string, params: Record<string, string>): Part => ({ table: name, command: 'table_create', params: { name, ...params } });
  const column = (name: string, col: string, params: Record<string, string>): Part => ({ table: name, column: col, command: 'column_create', params: { table: name, name: col, ...params } });
  return [
    // Key-ordered (a patricia trie): a range of ids is read in order (the search's window).
    table(t.documents, { flags: 'TABLE_PAT_KEY', key_type: 'UInt32' }),
    column(t.documents, 'body', { flags: 'COLUMN_SCALAR', type: 'LongText' }),
    ...FILTER_COLUMNS.map((c) => column(t.documents, c, { flags: 'COLUMN_SCALAR', type: 'UInt32' })),
    column(t.documents, 'filter_words', { flags: 'COLUMN_SCALAR', type: 'ShortText' }),
    table(t.terms, { flags: 'TABLE_PAT_KEY', key_type: 'ShortText', default_tokenizer: 'TokenBigram', normalizer: 'NormalizerAuto' }),
    column(t.terms, 'body', { flags: 'COLUMN_INDEX|WITH_POSITION', type: t.documents, source: 'body' }),
    table(t.filterWords, { flags: 'TABLE_PAT_KEY', key_type: 'ShortText', default_tokenizer: 'TokenDelimit' }),
    column(t.filterWords, 'filter_words', { flags: 'COLUMN_INDEX', type: t.documents, source: 'filter_words' }),
    table(t.state, { flags: 'TABLE_HASH_KEY', key_type: 'ShortText' }),
    column(t.state, 'value', { flags: 'COLUMN_SCALAR', type: 'ShortText' }),
  ];
}

/** The parts of the schema the server does not have (one `schema` command). */
async function missingParts(t: ReturnType<typeof groongaTables>): Promise<Part[]> {
  const { tables } = await groongaCommand<{ tables: Record<string, { columns: Record<string, unknown> }> }>('schema', {});
  return schema(t).filter((p) => !(p.table in tables) || (p.column !== undefined && !(p.column in tables[p.table].columns)));
}

/**
 * The tables and their columns, each created when missing (idempotent; at start-up by every
 * process, and by each run of the index: ./groongaIndex.ts), so that a server whose schema was
 * made by an earlier version, or cut off halfway, is completed. Documents that were written
 * without a column made now (the filter words) are written again: the index's position is
 * dropped, and its next run writes every document afresh.
 */
export async function createGroongaTables(): Promise<void> {
  const t = groongaTables();
  const missing = await missingParts(t);
  if (!missing.length) return;
  const refill = !missing.some((p) => p.table === t.documents && !p.column) && missing.some((p) => p.table === t.documents);
  try {
    for (const p of missing) await groongaCommand(p.command, p.params);
  } catch (err) {
    // Another process starting at the same time made them first.
    if ((await missingParts(t)).length) throw err;
  }
  if (refill) await groongaCommand('delete', { table: t.state, key: 'tickets' });
}
