import { Router } from 'express';
import type { Transaction } from 'sequelize';
import { recorded, type RecordedRouter } from './routes';
import { Setting } from '../db/models';
import { sendSuccess } from './envelope';
import { MethodNotAllowedError } from './errors';

/**
 * The settings object of one scope: every value a string. Inside a transaction, pass it: a second
 * connection taken from the pool while the transaction holds one can wait for ever when every
 * connection is held by a transaction waiting on this one's locks.
 */
export async function readSettings(scope: string, transaction?: Transaction): Promise<Record<string, string>> {
  const rows = await Setting.findAll({ where: { scope }, order: [['name', 'ASC']], transaction });
  return Object.fromEntries(rows.map((r) => [r.name, r.value]));
}

/** `GET <path>`: a read-only settings object. */
export function settingsRouter(path: string, scope: string): RecordedRouter {
  const router = Router();
  router.get(path, async (_req, res) => sendSuccess(res, await readSettings(scope)));
  router.all(path, (req) => {
    throw new MethodNotAllowedError(req.method, 'GET');
  });
  return recorded(router, [{ method: 'GET', path, action: 'settings', label: `${scope} settings` }]);
}
