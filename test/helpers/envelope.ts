/**
 * Assertions on the response envelope `{ status, message, data }` (lists add `count`).
 */
import type { Response } from 'supertest';

/** A success envelope (not a list): status 200, exactly these keys, the given message, data present; returns the data. */
export function expectSuccess(res: Response, message: string | null = null): any {
  expect({ status: res.status, body: res.body }).toEqual({
    status: 200,
    body: { status: 'success', message, data: expect.anything() },
  });
  return res.body.data;
}

/** The error envelope with the given status and message (a RegExp matches the message). */
export function expectError(res: Response, status: number, message: string | RegExp): void {
  expect({ status: res.status, body: res.body }).toEqual({
    status,
    body: { status: 'error', message: typeof message === 'string' ? message : expect.stringMatching(message), data: null },
  });
}

/** A list envelope: status 200, keys status/message/data/count, no message, data an array, count an integer; returns the data. */
export function expectList(res: Response): any[] {
  expect({ status: res.status, keys: Object.keys(res.body).sort() }).toEqual({ status: 200, keys: ['count', 'data', 'message', 'status'] });
  expect(res.body).toMatchObject({ status: 'success', message: null });
  expect(Array.isArray(res.body.data)).toBe(true);
  expect(Number.isInteger(res.body.count)).toBe(true);
  return res.body.data;
}

/** 404: `The <label> with given ID was not found.` */
export function expectNotFound(res: Response, label: string): void {
  expectError(res, 404, `The ${label} with given ID was not found.`);
}

/** The envelope of a delete: status 200, `Successfully deleted the <label>!`, data null. */
export function expectDeleted(res: Response, label: string): void {
  expect({ status: res.status, body: res.body }).toEqual({
    status: 200,
    body: { status: 'success', message: `Successfully deleted the ${label}!`, data: null },
  });
}
