import type { Express } from 'express';
import type { Server } from 'node:http';
import request from 'supertest';
import { buildApp } from '../../src/app';
import { httpServer } from '../../src/http/nodeServer';
import { createToken } from '../../src/auth/tokens';
import { sequelize } from '../../src/db/sequelize';
import { prepareDatabase } from '../../src/cli/setup';
import { closeQueues } from '../../src/queue/producer';
import { closeOpenWorkers } from '../../src/queue/runWorker';
import { existsSync, writeFileSync } from 'node:fs';
import { closeCounters } from '../../src/redis/windowCounter';
import { searchEngine } from '../../src/ticket/tickets/search/engine';
import { encodeForm } from './form';
import { preparedMarker } from './testResources';

export interface TestApi {
  app: Express;
  /** The app on the server the web process listens with (src/http/nodeServer.ts); the helpers below use it. */
  server: Server;
  token: string;
  get(path: string, query?: Record<string, unknown>): request.Test;
  post(path: string, form?: Record<string, unknown>): request.Test;
  put(path: string, form?: Record<string, unknown>): request.Test;
  del(path: string): request.Test;
  /** POST with a JSON body. */
  postJson(path: string, body: unknown): request.Test;
  /** PUT with a JSON body. */
  putJson(path: string, body: unknown): request.Test;
}

/**
 * The web app on this worker's database (created, migrated and seeded), with a fresh API token.
 * `post` and `put` form-encode their body with bracket arrays, as the spec's clients send them
 * (`encodeForm` in ./form.ts).
 */
export function useApi(): TestApi {
  const api = {} as TestApi;
  beforeAll(async () => {
    await prepareOnce();
    api.app = buildApp();
    // Not listening: supertest listens while requests are under way.
    api.server = httpServer(api.app);
    api.token = (await createToken('test')).token;
    const auth = (t: request.Test) => t.auth(api.token, 'x');
    api.get = (path, query) => auth(request(api.server).get(path).query(query ?? {}));
    api.post = (path, form) => auth(request(api.server).post(path).type('form').send(encodeForm(form)));
    api.put = (path, form) => auth(request(api.server).put(path).type('form').send(encodeForm(form)));
    api.del = (path) => auth(request(api.server).delete(path));
    api.postJson = (path, body) => auth(request(api.server).post(path).type('json').send(body as object));
    api.putJson = (path, body) => auth(request(api.server).put(path).type('json').send(body as object));
  });
  afterAll(async () => {
    // Workers the file started and has not closed yet (its own afterAll may come after this one).
    await closeOpenWorkers();
    await closeQueues();
    closeCounters();
    await sequelize().close();
  });
  return api;
}

/**
 * Creates, migrates and seeds this worker's database once: later test files of the same jest
 * worker find the marker and skip it (the seed is idempotent, but running it per file is slow).
 */
async function prepareOnce(): Promise<void> {
  const marker = preparedMarker(process.env.QUEUE_PREFIX!);
  // The file's search engine (SEARCH_ENGINE), whatever an earlier file of this worker had.
  if (existsSync(marker)) return searchEngine().prepare();
  await prepareDatabase();
  writeFileSync(marker, String(process.pid));
}

let seq = 0;
/** A value unique within the run (names, emails). */
export const unique = (prefix = 't') => `${prefix}${process.pid}x${Date.now().toString(36)}x${(seq++).toString(36)}`;

/** A fresh, lower-case email address. */
export const newEmail = (prefix = 'u', domain = 'example.com') => `${unique(prefix)}@${domain}`.toLowerCase();

/** The current time in UNIX seconds. */
export const nowSec = (): number => Math.floor(Date.now() / 1000);

/**
 * Valid London numbers `+4420<digit>nnnnnnn`, unique within the run: each call gives the E.164
 * form and a spaced form that normalises to it. Files pass different digits, so that their
 * numbers never collide.
 */
export function phoneNumbers(digit: string): () => { e164: string; spaced: string } {
  let seq = 0;
  const base = Math.floor(Math.random() * 9_000_000);
  return () => {
    const digits = String((base + seq++) % 10_000_000).padStart(7, '0');
    return { e164: `+4420${digit}${digits}`, spaced: `+44 20 ${digit}${digits.slice(0, 3)} ${digits.slice(3)}` };
  };
}

/** A fresh address from the documentation ranges. */
let ipSeq = 0;
export const testIp = () => {
  ipSeq++;
  return `198.51.${100 + Math.floor(ipSeq / 250) % 100}.${1 + (ipSeq % 250)}`;
};
