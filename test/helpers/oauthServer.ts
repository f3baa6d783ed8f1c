import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { OAuth2Server } from 'oauth2-mock-server';

/**
 * A real OAuth2 authorization server for one test file (oauth2-mock-server: signed JWT access
 * tokens, the refresh_token grant, a userinfo endpoint), on a free port of 127.0.0.1, made strict
 * enough to be worth testing against: only the registered client (id and secret) is served, only
 * a refresh token it issued and has not rotated away is accepted, and the userinfo endpoint (what
 * dovecot's oauth2 passdb and the test SMTP server validate a token with, as they would Microsoft
 * Graph's /me) answers 200 with the owner's address only for an access token it issued that has
 * not expired or been revoked; anything else is 401.
 */
export interface TokenServer {
  /** http://127.0.0.1:<port>/token */
  tokenUrl: string;
  /** http://127.0.0.1:<port>/userinfo (Authorization: Bearer <token>) */
  userinfoUrl: string;
  clientId: string;
  clientSecret: string;
  /** Issues a refresh token for `user` (what an administrator's consent would have produced). */
  grant(user: string): string;
  /** Lifetime in seconds of the access tokens issued from now on (default 3600). */
  ttl: number;
  /** Whether a refresh answers a new refresh token (the old one then stops working). Default true. */
  rotate: boolean;
  /** Refresh grants answered, successful or not, and the successful ones. */
  refreshes: { asked: number; granted: number };
  /** Access tokens issued, newest last. */
  issued: Array<{ token: string; user: string; exp: number }>;
  /** Makes an access token invalid at once (as a provider's revocation would). */
  revoke(accessToken: string): void;
  /** Whether `accessToken` is valid now, and for whom. */
  validate(accessToken: string): string | null;
  /** Whether a refresh token is currently accepted. */
  refreshTokenValid(token: string): boolean;
  stop(): Promise<void>;
}

type Req = IncomingMessage & { body?: Record<string, unknown> };

export async function startTokenServer(): Promise<TokenServer> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  const refreshTokens = new Map<string, string>(); // refresh token -> user
  const accessTokens = new Map<string, { user: string; exp: number }>();
  const clientId = `client-${randomUUID()}`;
  const clientSecret = randomUUID();
  const nowSec = () => Math.floor(Date.now() / 1000);

  const ts: TokenServer = {
    tokenUrl: '', userinfoUrl: '', clientId, clientSecret, ttl: 3600, rotate: true, refreshes: { asked: 0, granted: 0 }, issued: [],
    grant(user) {
      const token = `rt-${randomUUID()}`;
      refreshTokens.set(token, user);
      return token;
    },
    revoke(token) { accessTokens.delete(token); },
    validate(token) {
      const t = accessTokens.get(token);
      return t && t.exp > nowSec() ? t.user : null;
    },
    refreshTokenValid: (token) => refreshTokens.has(token),
    stop: () => server.stop(),
  };

  // The owner of the refresh token of a request, once the token is known to be valid.
  const ownerOf = (req: Req) => refreshTokens.get(String(req.body?.refresh_token ?? ''));

  server.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }, req: Req) => {
    const owner = ownerOf(req);
    // jti: tokens of one second are otherwise the same bytes (RS256 signatures are deterministic).
    if (owner) Object.assign(token.payload, { sub: owner, email: owner, exp: nowSec() + ts.ttl, jti: randomUUID() });
  });

  server.service.on('beforeResponse', (response: { statusCode: number; body: Record<string, any> }, req: Req) => {
    const body = req.body ?? {};
    if (body.grant_type !== 'refresh_token') {
      response.statusCode = 400;
      response.body = { error: 'unsupported_grant_type' };
      return;
    }
    ts.refreshes.asked += 1;
    if (body.client_id !== clientId || body.client_secret !== clientSecret) {
      response.statusCode = 401;
      response.body = { error: 'invalid_client', error_description: 'Unknown client or wrong secret.' };
      return;
    }
    const sent = String(body.refresh_token ?? '');
    const owner = refreshTokens.get(sent);
    if (!owner) {
      response.statusCode = 400;
      response.body = { error: 'invalid_grant', error_description: 'The refresh token is invalid, expired or was rotated.' };
      return;
    }
    const access = String(response.body.access_token);
    const exp = nowSec() + ts.ttl;
    accessTokens.set(access, { user: owner, exp });
    ts.issued.push({ token: access, user: owner, exp });
    ts.refreshes.granted += 1;
    delete response.body.id_token;
    response.body.expires_in = ts.ttl;
    if (ts.rotate) {
      refreshTokens.delete(sent);
      response.body.refresh_token = ts.grant(owner);
    } else {
      delete response.body.refresh_token;
    }
  });

  server.service.on('beforeUserinfo', (response: { statusCode: number; body: Record<string, unknown> }, req: Req) => {
    const m = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''));
    const user = m ? ts.validate(m[1]) : null;
    if (!user) {
      response.statusCode = 401;
      response.body = { error: 'invalid_token' };
      return;
    }
    response.body = { sub: user, email: user, active: 'true' };
  });

  await server.start(0, '127.0.0.1');
  const { port } = server.address();
  ts.tokenUrl = `http://127.0.0.1:${port}/token`;
  ts.userinfoUrl = `http://127.0.0.1:${port}/userinfo`;
  return ts;
}
