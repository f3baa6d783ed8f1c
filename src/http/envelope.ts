import type { Response } from 'express';

/** The spec's envelope: `{status, message, data}`, plus `count` (total matches) on lists. */
export interface Envelope {
  status: 'success' | 'error';
  message: string | null;
  data: unknown;
  count?: number;
}

export function sendSuccess(res: Response, data: unknown, message: string | null = null, status = 200): void {
  res.status(status).json({ status: 'success', message, data } satisfies Envelope);
}

export function sendList(res: Response, data: unknown[], count: number): void {
  res.status(200).json({ status: 'success', message: null, data, count } satisfies Envelope);
}

export function sendError(res: Response, httpStatus: number, message: string): void {
  res.status(httpStatus).json({ status: 'error', message, data: null } satisfies Envelope);
}
