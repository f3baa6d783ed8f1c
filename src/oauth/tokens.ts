import { config } from '../config';
import { decryptSecret, encryptSecret } from '../crypto/secrets';
import { now } from '../db/entity';
import { Brand, DepartmentEmail } from '../db/models';
import { transaction } from '../db/transaction';
import { logger } from '../logger';
import { OutboundRefusedError, foreignText, postChecked } from '../net/outbound';
import { scopeFor, tokenUrl, type OAuthUse } from './providers';
import { secretPurpose, type OAuthTable } from './settings';

/**
 * The one token service of the mailbox worker (IMAP, POP3) and the mail worker (SMTP): an access
 * token for an account that logs in with OAuth2, from the refresh token stored with it.
 *
 * The access token is kept (encrypted) with its expiry and handed out until OAUTH_REFRESH_BEFORE_SECONDS
 * (at most half its lifetime) before it expires. Then, or when the server refused it (`rejected`: a 401), it is refreshed in a
 * transaction that locks the account's row: a second worker refreshing at the same moment waits,
 * then finds the new token and uses it, so a provider that rotates refresh tokens never sees the
 * old one twice. A rotated refresh token is stored (encrypted) in that same transaction. A refresh
 * that fails is recorded on the account (`oauth_last_error`, shown as `oauth_state.last_error`)
 * and thrown as an OAuthError; the tokens are never logged nor put in an error.
 */

export interface OAuthAccount { table: OAuthTable; id: number; use: OAuthUse }

export class OAuthError extends Error {
  readonly code = 'EOAUTH';
}

type AccountRow = DepartmentEmail | Brand;

const modelOf = (table: OAuthTable) => (table === 'brands' ? Brand : DepartmentEmail) as unknown as {
  findByPk(id: number, options?: object): Promise<AccountRow | null>;
  update(values: object, options: object): Promise<unknown>;
};

/** An access token and when it expires (UNIX seconds). */
export interface AccessToken { token: string; expiresAt: number }

/** The stored access token while it is good for longer than the margin (and is not the one refused). */
function usable(table: OAuthTable, row: AccountRow, rejected: string | undefined): AccessToken | null {
  if (!row.oauth_access_token || !row.oauth_expires_at) return null;
  // At most half the token's lifetime: a provider issuing short-lived tokens is not asked at every use.
  const lifetime = row.oauth_expires_at - (row.oauth_last_refreshed_at ?? 0);
  if (row.oauth_expires_at - Math.min(config().oauth.refreshBeforeSeconds, Math.floor(lifetime / 2)) <= now()) return null;
  const token = decryptSecret(row.oauth_access_token, secretPurpose(table, 'oauth_access_token'));
  return token === rejected ? null : { token, expiresAt: row.oauth_expires_at };
}

/**
 * A valid access token for the account. `rejected`: the token the server just refused; a new one
 * is fetched unless another worker already replaced it.
 */
export async function accessToken(account: OAuthAccount, opts: { rejected?: string } = {}): Promise<AccessToken> {
  const row = await modelOf(account.table).findByPk(account.id);
  if (!row || row.auth_type !== 'oauth2') throw new OAuthError('The account does not log in with OAuth2 (any more).');
  return usable(account.table, row, opts.rejected) ?? refresh(account, opts.rejected);
}

async function refresh(account: OAuthAccount, rejected: string | undefined): Promise<AccessToken> {
  const { table, id } = account;
  try {
    return await transaction(async (t) => {
      const row = await modelOf(table).findByPk(id, { transaction: t, lock: t.LOCK.UPDATE });
      if (!row || row.auth_type !== 'oauth2') throw new OAuthError('The account does not log in with OAuth2 (any more).');
      const done = usable(table, row, rejected);
      if (done) return done; // refreshed by another worker while this one waited for the lock
      const granted = await exchange(row, account.use, decryptSecret(row.oauth_refresh_token ?? '', secretPurpose(table, 'oauth_refresh_token')),
        row.oauth_client_secret ? decryptSecret(row.oauth_client_secret, secretPurpose(table, 'oauth_client_secret')) : null);
      const at = now();
      await row.update({
        oauth_access_token: encryptSecret(granted.accessToken, secretPurpose(table, 'oauth_access_token')),
        oauth_expires_at: at + granted.expiresIn,
        oauth_last_refreshed_at: at,
        oauth_last_error: null,
        oauth_last_error_at: null,
        // A provider that rotates refresh tokens has just made the stored one worthless.
        ...(granted.refreshToken ? { oauth_refresh_token: encryptSecret(granted.refreshToken, secretPurpose(table, 'oauth_refresh_token')) } : {}),
      }, { transaction: t });
      logger.info({ account: `${table}/${id}`, expiresIn: granted.expiresIn, rotated: Boolean(granted.refreshToken) }, 'oauth2 access token refreshed');
      return { token: granted.accessToken, expiresAt: at + granted.expiresIn };
    }, 1); // never run again: the refresh is an effect outside the transaction (and may have rotated the token)
  } catch (err) {
    const reason = err instanceof OAuthError || err instanceof OutboundRefusedError ? err.message : `The token refresh failed: ${foreignText((err as Error).message, 200)}`;
    await modelOf(table).update({ oauth_last_error: reason, oauth_last_error_at: now() }, { where: { id } });
    logger.warn({ account: `${table}/${id}`, reason }, 'oauth2 token refresh failed');
    throw new OAuthError(reason);
  }
}

interface Granted { accessToken: string; expiresIn: number; refreshToken: string | null }

/** The refresh_token grant (RFC 6749 §6), client credentials in the body (what Microsoft and Google take). */
async function exchange(row: AccountRow, use: OAuthUse, refreshToken: string, clientSecret: string | null): Promise<Granted> {
  const url = tokenUrl(row);
  if (!url || !row.oauth_client_id || !refreshToken) throw new OAuthError('The OAuth2 settings are incomplete (token endpoint, client id or refresh token missing).');
  const scope = scopeFor(row, use);
  const body = new URLSearchParams({
    grant_type: 'refresh_token', refresh_token: refreshToken, client_id: row.oauth_client_id,
    ...(clientSecret ? { client_secret: clientSecret } : {}), ...(scope ? { scope } : {}),
  }).toString();
  const { status, json } = await postForm(url, body);
  const answer = (json ?? {}) as Record<string, unknown>;
  if (status !== 200 || typeof answer.access_token !== 'string' || !answer.access_token) {
    // The provider's error code and description say what to do (invalid_grant: consent again).
    const words = [answer.error, answer.error_description].filter((w) => typeof w === 'string').join(': ');
    throw new OAuthError(`The token endpoint refused the refresh (${status}${words ? `, ${foreignText(words, 200)}` : ''}).`);
  }
  const expiresIn = Number(answer.expires_in);
  return {
    accessToken: answer.access_token,
    // Without expires_in, an hour: what Microsoft and Google issue.
    expiresIn: Number.isFinite(expiresIn) && expiresIn > 0 ? Math.floor(expiresIn) : 3600,
    refreshToken: typeof answer.refresh_token === 'string' && answer.refresh_token ? answer.refresh_token : null,
  };
}

const MAX_ANSWER_BYTES = 64 * 1024;

/** POSTs a form to the token endpoint through postChecked (checked address, no redirects), answer as JSON. */
async function postForm(url: string, body: string): Promise<{ status: number; json: unknown }> {
  const { timeoutMs } = config().oauth;
  try {
    const answer = await postChecked(url, body, {
      use: 'oauth-token',
      timeoutMs,
      maxBodyBytes: MAX_ANSWER_BYTES,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
    });
    let json: unknown = null;
    try { json = JSON.parse(answer.body!.toString('utf8')); } catch { /* not JSON: the status tells */ }
    return { status: answer.status, json };
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw new OutboundRefusedError(`The token endpoint is not allowed: ${err.message}`);
    if ((err as Error).name === 'TimeoutError') throw new OAuthError(`The token endpoint did not answer within ${timeoutMs} ms.`);
    throw err;
  }
}
