import http from 'node:http';
import https from 'node:https';
import { config } from '../../../config';
import { FILTER_COLUMNS } from './columns';

/**
 * The Groonga server of SEARCH_ENGINE=groonga (`groonga -s --protocol http`): its commands over
 * HTTP, and the tables this help desk keeps there. Several help desks (or test runs) may share a
 * server: each keeps its tables under its database's name.
 */

/** A command's answer may take this long (a search of a common word at a million tickets: about 0.1 s). */
const TIMEOUT_MS = 30_000;

/** Groonga's answer: a header (return code, start, elapsed, message on error), then the body. */
type Answer<T> = [[number, number, number, string?], T];

// Connections are kept for a server that keeps them (groonga-httpd); Groonga's own HTTP server
// closes each after its answer. node:http rather than fetch: a third of the CPU per command
// (measured: 0.56 ms against 1.68 for a search, 16 at a time).
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

/**
 * Runs a Groonga command: GET `/d/<name>?<params>`, or a POST of `body` as JSON (`load`). Returns
 * the answer's body; throws when the server cannot be reached or answers an error.
 */
export async function groongaCommand<T = unknown>(name: string, params: Record<string, string | number>, body?: unknown): Promise<T> {
  const base = config().searchGroongaUrl;
  const url = new URL(`d/${name}`, base.endsWith('/') ? base : `${base}/`);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));
  let res: { status: number; text: string };
  try {
    res = await exchange(url, body === undefined ? undefined : JSON.stringify(body));
  } catch (err) {
    const e = err as Error & { code?: string };
    throw new Error(`The Groonga server at ${url.origin} (SEARCH_GROONGA_URL) did not answer ${name}: ${e.code ?? e.message}`);
  }
  let answer: Answer<T>;
  try {
    answer = JSON.parse(res.text) as Answer<T>;
  } catch {
    throw new Error(`Groonga ${name}: HTTP ${res.status}, not a Groonga answer: ${res.text.slice(0, 200)}`);
  }
  const [rc, , , message] = answer[0];
  if (rc !== 0) throw new Error(`Groonga ${name}: ${message ?? `return code ${rc}`}`);
  return answer[1];
}

/** This help desk's tables on the server: named after its database (Groonga names: letters, digits, `_`). */
export function groongaTables(): { documents: string; terms: string; state: string } {
  const prefix = `helpdesk_${config().database.name.replace(/[^0-9A-Za-z_]/g, '_')}`;
  return { documents: `${prefix}_tickets`, terms: `${prefix}_terms`, state: `${prefix}_state` };
}

/**
 * The tables, created when missing (idempotent; at start-up by every process, and by each run of
 * the index: ./groongaIndex.ts): one document
 * per listed ticket (key: its id; its text, and the ticket's columns a search may be narrowed by),
 * the text's index (TokenBigram, NormalizerAuto: as Mroonga's, so that both engines find the same
 * words), and the state (the index's position in the tickets' change stream).
 */
export async function createGroongaTables(): Promise<void> {
  const t = groongaTables();
  const tables = async () => new Set(((await groongaCommand<unknown[][]>('table_list', {})).slice(1)).map((row) => String(row[1])));
  const existing = await tables();
  const run = (name: string, params: Record<string, string>) => groongaCommand(name, params);
  try {
    await create(t, existing, run);
  } catch (err) {
    // Another process starting at the same time made them first.
    const now = await tables();
    if (![t.documents, t.terms, t.state].every((name) => now.has(name))) throw err;
  }
}

async function create(
  t: ReturnType<typeof groongaTables>, existing: Set<string>, run: (name: string, params: Record<string, string>) => Promise<unknown>,
): Promise<void> {
  if (!existing.has(t.documents)) {
    // Key-ordered (a patricia trie): a range of ids is read in order (the search's window).
    await run('table_create', { name: t.documents, flags: 'TABLE_PAT_KEY', key_type: 'UInt32' });
    await run('column_create', { table: t.documents, name: 'body', flags: 'COLUMN_SCALAR', type: 'LongText' });
    for (const c of FILTER_COLUMNS) await run('column_create', { table: t.documents, name: c, flags: 'COLUMN_SCALAR', type: 'UInt32' });
  }
  if (!existing.has(t.terms)) {
    await run('table_create', { name: t.terms, flags: 'TABLE_PAT_KEY', key_type: 'ShortText', default_tokenizer: 'TokenBigram', normalizer: 'NormalizerAuto' });
    await run('column_create', { table: t.terms, name: 'body', flags: 'COLUMN_INDEX|WITH_POSITION', type: t.documents, source: 'body' });
  }
  if (!existing.has(t.state)) {
    await run('table_create', { name: t.state, flags: 'TABLE_HASH_KEY', key_type: 'ShortText' });
    await run('column_create', { table: t.state, name: 'value', flags: 'COLUMN_SCALAR', type: 'ShortText' });
  }
}
