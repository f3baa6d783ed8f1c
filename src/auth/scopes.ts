/**
 * API token scopes. A token without scopes has full access (as every token had before scopes).
 * A scope is `read` or `write` for every area, or `<area>:read` / `<area>:write` for one of the
 * spec's areas; write implies read. A request needs `<area>:read` for GET/HEAD/OPTIONS and
 * `<area>:write` for any other method (after X-HTTP-Method-Override).
 *
 * Administration needs `core:write` (or `core:read` to read it), whatever area its path is in:
 * everything under /api/core (brands with their SMTP settings, webhooks, settings, bans...), the
 * department mailboxes under /api/ticket/department/{id}/email (server, user name, password), and
 * the queue dashboard. Tokens themselves are managed by the CLI only, which is beyond any scope.
 * A write that reaches past its path's area needs that area's scope too, checked where the change
 * is made (ScopeRequiredError): deleting a department with mailboxes `core:write`, deleting a user
 * with tickets `ticket:write`.
 */
export const AREAS = ['core', 'user', 'ticket', 'selfservice'] as const;
export type Area = (typeof AREAS)[number];
export type Level = 'read' | 'write';

const SCOPE = new RegExp(`^(?:(?:${AREAS.join('|')}):)?(?:read|write)$`);

export class ScopeError extends Error {}

/** `ticket:write,user:read` → the scopes, validated, once each (throws ScopeError naming a bad one). */
export function parseScopes(list: string): string[] {
  const scopes = [...new Set(list.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean))];
  if (!scopes.length) throw new ScopeError('--scopes needs at least one scope');
  const bad = scopes.find((s) => !SCOPE.test(s));
  if (bad) throw new ScopeError(`unknown scope "${bad}": use read, write, or <area>:read / <area>:write with area one of ${AREAS.join(', ')}`);
  return scopes;
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The area whose records each incremental export (`/api/export/{resource}`) holds. */
const EXPORTED: Readonly<Record<string, Area>> = { tickets: 'ticket', messages: 'ticket', users: 'user', organisations: 'user', articles: 'selfservice' };

/** A path segment as a route parameter reads it (`%75sers` is `users`); a malformed one as it is. */
function decoded(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The scope a request under /api needs (`path` relative to /api). Express matches paths whatever
 * their case and decodes the parameters it hands a route, and the router skips nothing a scope
 * could hide behind, so the path is read decoded, in lower case and without empty segments
 * (`/Core//settings` is core's, `/export/%75sers` user's). A path in no area needs the
 * administrator's scope, never none: whatever is served there later is not open to every token.
 */
export function requiredScope(method: string, path: string): string {
  const level: Level = READS.has(method) ? 'read' : 'write';
  const [first, ...rest] = path.split('/').filter(Boolean).map((s) => decoded(s).toLowerCase());
  if (first === 'export') return `${(Object.hasOwn(EXPORTED, rest[0] ?? '') && EXPORTED[rest[0]]) || 'core'}:${level}`;
  if (!(AREAS as readonly string[]).includes(first)) return `core:${level}`;
  const mailbox = first === 'ticket' && rest[0] === 'department' && rest[2] === 'email';
  return `${mailbox ? 'core' : first}:${level}`;
}

/** Whether `scopes` (null: full access) grant `required` (`area:level`). */
export function grants(scopes: readonly string[] | null, required: string): boolean {
  if (!scopes) return true;
  const [area, level] = required.split(':');
  if (scopes.includes('write') || scopes.includes(`${area}:write`)) return true;
  return level === 'read' && (scopes.includes('read') || scopes.includes(`${area}:read`));
}
