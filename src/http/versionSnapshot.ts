import type { RequestHandler } from 'express';
import { withVersionSnapshot } from '../db/versionedCache';

/**
 * The rest of an API request runs with its cache versions as read at its start (or when first
 * needed): every cache it consults asks Redis once per version, not once per use
 * (db/versionedCache.ts VersionSnapshot). Mounted after the body parsers: a stream's callbacks
 * would not carry the context set before them.
 */
export const requestVersions: RequestHandler = (_req, res, next) => withVersionSnapshot((res.locals.versions ??= new Map()), next);
