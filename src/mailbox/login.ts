import { MAILBOX_PASSWORD, decryptSecret } from '../crypto/secrets';
import type { DepartmentEmail } from '../db/models';
import { accessToken, type OAuthAccount } from '../oauth/tokens';

/** How a poll logs in: the mailbox's password, or an OAuth2 access token (XOAUTH2/OAUTHBEARER). */
export type MailLogin = { pass: string } | { accessToken: string };

/**
 * Runs a poll with the mailbox's login. With OAuth2, a token the server refuses (revoked, or
 * expired before its time) is replaced once by a fresh one from the token service, and the poll
 * tried again: a refused login imported nothing, so running it again is harmless.
 */
export async function withLogin<T>(mailbox: DepartmentEmail, poll: (login: MailLogin) => Promise<T>): Promise<T> {
  if (mailbox.auth_type !== 'oauth2') return poll({ pass: decryptSecret(mailbox.password ?? '', MAILBOX_PASSWORD) });
  const account: OAuthAccount = { table: 'department_emails', id: mailbox.id, use: mailbox.protocol };
  const { token } = await accessToken(account);
  try {
    return await poll({ accessToken: token });
  } catch (err) {
    if (!(err as { authenticationFailed?: boolean })?.authenticationFailed) throw err;
    return poll({ accessToken: (await accessToken(account, { rejected: token })).token });
  }
}
