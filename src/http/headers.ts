import type { RequestHandler } from 'express';

/** On every response: browsers take a JSON answer for JSON, never sniff it into something else. */
export const noSniff: RequestHandler = (_req, res, next) => {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  next();
};

/**
 * API and account responses carry secrets (smtp_password, simpleauth_key, verification links'
 * state): no browser or proxy cache may keep them.
 */
export const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};
