import { Router } from 'express';
import { recorded, type RecordedRouter } from './routes';
import { readSettings } from '../db/settings';
import { sendSuccess } from './envelope';
import { MethodNotAllowedError } from './errors';

/** `GET <path>`: a read-only settings object. */
export function settingsRouter(path: string, scope: string): RecordedRouter {
  const router = Router();
  router.get(path, async (_req, res) => sendSuccess(res, await readSettings(scope)));
  router.all(path, (req) => {
    throw new MethodNotAllowedError(req.method, 'GET');
  });
  return recorded(router, [{ method: 'GET', path, action: 'settings', label: `${scope} settings` }]);
}
