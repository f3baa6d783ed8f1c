import { Router } from 'express';
import { migrations } from '../../migrations';
import { select } from '../db/select';
import { counterClient } from '../redis/windowCounter';
import { redisWhere } from '../redis/topology';
import { config } from '../config';
import { mariadbProblem, redisProblem } from '../lib/serviceErrors';
import { searchEngine } from '../ticket/tickets/search/engine';

const CHECK_TIMEOUT_MS = 2000;

let draining = false;

/** From SIGTERM on, `/readyz` answers 503 so load balancers stop sending new requests here. */
export function startDraining(): void {
  draining = true;
}

export const isDraining = () => draining;

const within = <T>(p: Promise<T>, what: string) => new Promise<T>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`${what} did not answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  p.then((v) => { clearTimeout(timer); resolve(v); }, (e) => { clearTimeout(timer); reject(e); });
});

/** A database error in our words (the service, where, why), else the error as it is. */
const inOurWords = (err: unknown) => mariadbProblem(err, config().database.url) ?? (err as Error).message;

async function database(): Promise<string | null> {
  try {
    await within(select('SELECT 1'), 'MariaDB');
  } catch (err) {
    return inOurWords(err);
  }
  return null;
}

async function redisCheck(): Promise<string | null> {
  let pong: string;
  try {
    pong = await within(counterClient().ping(), 'Redis');
  } catch (err) {
    return redisProblem(err, redisWhere());
  }
  return pong === 'PONG' ? null : `Redis answered ${pong}`;
}

/** Every migration this code knows is applied (a newer database, migrated by a newer release, is fine). */
async function migrationsCheck(): Promise<string | null> {
  let rows: Array<{ name: string }>;
  try {
    rows = await within(select<{ name: string }>('SELECT name FROM migrations'), 'MariaDB');
  } catch (err) {
    return `not known: ${inOurWords(err)}`;
  }
  const applied = new Set(rows.map((r) => r.name));
  const pending = migrations.map((m) => m.name).filter((n) => !applied.has(n));
  return pending.length ? `${pending.length} pending (${pending.join(', ')})` : null;
}

/** Once found, the index stays (nothing but an operator's DROP removes it): not asked again. */
let searchPrepared = false;

/** The search engine's index is in the database (SEARCH_ENGINE=mroonga: `prepare` has run on it). */
async function searchCheck(): Promise<string | null> {
  const engine = searchEngine();
  if (searchPrepared || !engine.unprepared) return null;
  let problem: string | null;
  try {
    problem = await within(engine.unprepared(), 'MariaDB');
  } catch (err) {
    return `not known: ${inOurWords(err)}`;
  }
  searchPrepared = problem === null;
  return problem;
}

/** What keeps this process from serving: empty when ready. */
export async function readinessProblems(): Promise<string[]> {
  const checks = { database, redis: redisCheck, migrations: migrationsCheck, search: searchCheck };
  const results = await Promise.all(Object.entries(checks).map(async ([name, check]) => {
    try {
      const problem = await check();
      return problem ? `${name}: ${problem}` : null;
    } catch (err) {
      return `${name}: ${(err as Error).message}`;
    }
  }));
  return results.filter((r): r is string => r !== null);
}

/**
 * `/healthz`: the process is alive (no dependency is asked: restarting the process would not fix
 * them). `/readyz`: it can serve: MariaDB and Redis answer, every migration is applied and the
 * search engine's index is there (SEARCH_ENGINE=mroonga on a database its `prepare` never ran on
 * answers every search 500); 503 with the reasons otherwise, and from the moment it starts
 * shutting down. Neither needs a token.
 */
export function healthRouter(): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json({ status: 'success', message: null, data: { status: 'alive' } });
  });
  router.get('/readyz', async (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    if (draining) {
      res.status(503).json({ status: 'error', message: 'Not ready: the process is shutting down.', data: null });
      return;
    }
    const problems = await readinessProblems();
    if (problems.length) {
      // Each problem is a sentence of its own words (`... or set REDIS_URL.`): one full stop, at the end.
      res.status(503).json({ status: 'error', message: `Not ready: ${problems.map((p) => p.replace(/\.+$/, '')).join('; ')}.`, data: null });
      return;
    }
    res.json({ status: 'success', message: null, data: { database: 'ok', redis: 'ok', migrations: 'ok', search: 'ok' } });
  });
  return router;
}
