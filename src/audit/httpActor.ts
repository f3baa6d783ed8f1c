import type { RequestHandler } from 'express';
import { tokenIdOf } from '../http/auth';
import { runAs } from './actor';

/**
 * An API request acts as its token (the audit's actor, channel `api`). Mounted after the body
 * parsers: a stream's callbacks would not carry the context set before them.
 */
export const actingToken: RequestHandler = (_req, res, next) => runAs({ type: 'token', id: tokenIdOf(res) ?? null, channel: 'api' }, next);
