import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomBytes } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { Op, UniqueConstraintError, type Transaction } from 'sequelize';
import { config } from '../config';
import { IdempotencyKey } from '../db/models';
import { now } from '../db/entity';
import { SecretKeyMissingError, decryptSecret, encryptSecret } from '../crypto/secrets';
import { afterOutermostCommit, onTransactionStart } from '../db/transaction';
import { logger } from '../logger';
import { idempotentReplays } from '../ops/metrics';
import { tokenIdOf } from './auth';
import { sentMethod } from './body';
import { HttpError } from './errors';
import { counterClient } from '../redis/windowCounter';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';

export const IN_PROGRESS = 'A request with this Idempotency-Key is still being processed.';
export const OTHER_REQUEST = 'The Idempotency-Key has already been used with a different request (method, path or body).';
export const RESPONSE_LOST = 'A request with this Idempotency-Key was already processed, but the server stopped before its response was stored. It is not run again.';

/** The request being served under a key: whether its work claimed the key in a transaction yet. */
interface Claim {
  tokenId: number;
  keyHash: string;
  fingerprint: string;
  path: string;
  state: 'none' | 'pending' | 'committed';
}

const claims = new AsyncLocalStorage<Claim>();

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** JSON with object keys sorted, so that the same fields in another order are the same body. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * The first transaction of a request sent with a key inserts the key's row, in that transaction:
 * the work and the claim commit together or not at all. A later request with the key (after this
 * process died, its lock expired) finds the row and never runs the work again; two requests
 * racing without Redis block on the row's unique key, and the second gets 409.
 */
async function claimInTransaction(t: Transaction): Promise<void> {
  const claim = claims.getStore();
  if (!claim || claim.state === 'committed') return;
  try {
    await IdempotencyKey.create({ token_id: claim.tokenId, key_hash: claim.keyHash, fingerprint: claim.fingerprint, path: claim.path, created_at: now() }, { transaction: t });
  } catch (err) {
    if (err instanceof UniqueConstraintError) throw new HttpError(409, IN_PROGRESS);
    throw err;
  }
  claim.state = 'pending';
  afterOutermostCommit(t, () => {
    claim.state = 'committed';
  });
}
onTransactionStart(claimInTransaction);

const lockKey = (c: Pick<Claim, 'tokenId' | 'keyHash'>) => `${config().queuePrefix}:idempotency:${c.tokenId}:${c.keyHash}`;
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

/**
 * Takes the key's lock in Redis (SET NX with the lock time): true when taken, false when another
 * request holds it, null when Redis does not answer (the claim in the database still keeps the
 * work to one run).
 */
async function lock(claim: Claim, owner: string): Promise<boolean | null> {
  try {
    return (await counterClient().set(lockKey(claim), owner, 'PX', config().idempotency.lockSeconds * 1000, 'NX')) === 'OK';
  } catch (err) {
    logger.warn({ reason: (err as Error).message }, 'Redis unavailable: an Idempotency-Key is used without its lock');
    return null;
  }
}

async function unlock(claim: Claim, owner: string): Promise<void> {
  await counterClient().eval(RELEASE, 1, lockKey(claim), owner).catch(() => undefined);
}

const live = (claim: Claim) => IdempotencyKey.findOne({
  where: { token_id: claim.tokenId, key_hash: claim.keyHash, created_at: { [Op.gt]: now() - config().idempotency.ttlSeconds } },
});

const RESPONSE_PURPOSE = 'idempotency_keys.response';

/**
 * A response kept for replays is encrypted at rest, as a secret is: it may hold one shown once (a
 * webhook's signing secret). Without SECRET_KEY (production) nothing holding a secret can be
 * created, so the response is kept as it is.
 */
function sealResponse(response: StoredResponse): string {
  const text = JSON.stringify(response);
  try {
    return encryptSecret(text, RESPONSE_PURPOSE);
  } catch (err) {
    if (err instanceof SecretKeyMissingError) return text;
    throw err;
  }
}

/**
 * What a replay answers besides the status: the body, and the `Location` the first answer gave (a
 * bulk job's 202). Stored as `{ replay: 1, body, location }`; a row written before headers were
 * kept holds the body alone (an envelope, which never has a `replay` field).
 */
interface StoredResponse { replay: 1; body: unknown; location: string | null }

/** A stored response: encrypted (`v1:…`), or plain JSON (kept without a key, or before responses were encrypted). */
function openResponse(stored: string): StoredResponse {
  const parsed = JSON.parse(stored.startsWith('v1:') ? decryptSecret(stored, RESPONSE_PURPOSE) : stored) as Partial<StoredResponse> | null;
  return parsed?.replay === 1 ? parsed as StoredResponse : { replay: 1, body: parsed, location: null };
}

/** The stored answer, or the reason there is none: another request, or a response lost. */
function answer(res: Response, row: IdempotencyKey, claim: Claim): void {
  if (row.fingerprint !== claim.fingerprint) throw new HttpError(422, OTHER_REQUEST);
  if (row.response === null || row.status_code === null) throw new HttpError(409, RESPONSE_LOST);
  idempotentReplays.inc();
  res.setHeader(REPLAYED_HEADER, 'true');
  const stored = openResponse(row.response);
  if (stored.location) res.location(stored.location);
  res.status(row.status_code).json(stored.body);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Writes the response down before it is sent (a process that dies after that point leaves an
 * answer to replay): on the row the work claimed, whatever its status; as a new row for a 2xx
 * that did no transaction; nothing for an error that changed nothing (the client may fix the
 * request and send it again with the same key).
 */
async function store(claim: Claim, status: number, response: StoredResponse): Promise<void> {
  const values = { status_code: status, response: sealResponse(response), completed_at: now() };
  if (claim.state === 'committed') {
    await IdempotencyKey.update(values, { where: { token_id: claim.tokenId, key_hash: claim.keyHash } });
  } else if (status >= 200 && status < 300) {
    await IdempotencyKey.create({ token_id: claim.tokenId, key_hash: claim.keyHash, fingerprint: claim.fingerprint, path: claim.path, created_at: now(), ...values })
      .catch((err) => { if (!(err instanceof UniqueConstraintError)) throw err; });
  }
}

/**
 * `Idempotency-Key` on a POST under /api (one that X-HTTP-Method-Override makes PUT or DELETE too): the same key (per API token) with the same request within
 * IDEMPOTENCY_TTL_SECONDS answers the first response (status, body and Location, with `Idempotent-Replayed:
 * true`) without doing the work again; with another method, path or body it is a 422. While the
 * first is still running, a second waits up to IDEMPOTENCY_WAIT_MS for its answer, then gets 409.
 * Requests without the header are untouched.
 */
export const idempotency: RequestHandler = async (req, res, next) => {
  const raw = req.headers['idempotency-key'];
  // A POST that an override made PUT or DELETE is a POST as sent (the fingerprint keeps the method it acts as).
  if (sentMethod(req) !== 'POST' || raw === undefined) return next();
  const key = Array.isArray(raw) ? raw.join(', ') : raw;
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) throw new HttpError(400, 'The Idempotency-Key header must be 1 to 255 visible ASCII characters.');
  const tokenId = tokenIdOf(res);
  if (tokenId === undefined) return next();
  const path = req.originalUrl.slice(0, 2048);
  const claim: Claim = {
    tokenId, keyHash: sha256(key), path, state: 'none',
    fingerprint: sha256(canonical([req.method, req.originalUrl, req.body ?? {}])),
  };

  // A stored answer, or a key used by another request. A row still without a response is a request
  // in flight (or one that died): the lock below tells which.
  const found = await live(claim);
  if (found && (found.response !== null || found.fingerprint !== claim.fingerprint)) return answer(res, found, claim);

  const owner = `${claim.fingerprint}:${randomBytes(8).toString('hex')}`;
  const { waitMs } = config().idempotency;
  let locked = await lock(claim, owner);
  for (const deadline = Date.now() + waitMs; locked === false && Date.now() < deadline;) {
    await sleep(50);
    const done = await live(claim);
    if (done && (done.response !== null || done.fingerprint !== claim.fingerprint)) return answer(res, done, claim);
    locked = await lock(claim, owner);
  }
  if (locked === false) {
    const holder = await counterClient().get(lockKey(claim)).catch(() => null);
    if (holder && !holder.startsWith(`${claim.fingerprint}:`)) throw new HttpError(422, OTHER_REQUEST);
    throw new HttpError(409, IN_PROGRESS);
  }

  // Finished while this one waited for the lock, or claimed by a process that died after its work
  // committed (its lock expired): either way the work is not run again.
  let row: IdempotencyKey | null;
  try {
    row = await live(claim);
    if (!row) await IdempotencyKey.destroy({ where: { token_id: claim.tokenId, key_hash: claim.keyHash } }); // an expired one
  } catch (err) {
    if (locked) await unlock(claim, owner);
    throw err;
  }
  if (row) {
    if (locked) await unlock(claim, owner);
    // Without Redis there is no lock to tell: a claim younger than the lock time may be in flight.
    if (locked === null && row.response === null && row.created_at > now() - config().idempotency.lockSeconds) throw new HttpError(409, IN_PROGRESS);
    return answer(res, row, claim);
  }

  const json = res.json.bind(res);
  const hold = config().testHoldResponse;
  res.json = ((body: unknown) => {
    const status = res.statusCode;
    void (async () => {
      try {
        if (hold?.at === 'before-store') await sleep(hold.ms);
        const location = res.getHeader('Location');
        await store(claim, status, { replay: 1, body, location: typeof location === 'string' ? location : null });
        if (hold?.at === 'after-store') await sleep(hold.ms);
      } catch (err) {
        logger.error({ reason: (err as Error).message }, 'the response of a request with an Idempotency-Key could not be stored');
      } finally {
        json(body);
        if (locked) await unlock(claim, owner);
      }
    })();
    return res;
  }) as Response['json'];
  return claims.run(claim, () => next());
};
