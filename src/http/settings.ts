import { Router } from 'express';
import { Setting } from '../db/models';
import { sendSuccess } from './envelope';
import { HttpError } from './errors';

/** The settings object of one scope: every value a string. */
export async function readSettings(scope: string): Promise<Record<string, string>> {
  const rows = await Setting.findAll({ where: { scope }, order: [['name', 'ASC']] });
  return Object.fromEntries(rows.map((r) => [r.name, r.value]));
}

/** `GET <path>`: a read-only settings object. */
export function settingsRouter(path: string, scope: string): Router {
  const router = Router();
  router.get(path, async (_req, res) => sendSuccess(res, await readSettings(scope)));
  router.all(path, (req) => {
    throw new HttpError(405, `The ${req.method} method is not supported here. Supported methods: GET.`, { Allow: 'GET' });
  });
  return router;
}
