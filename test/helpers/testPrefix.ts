/** The prefix of the test databases and Redis key prefixes: TEST_PREFIX, default `helpdesk_t`. */
export function testPrefix(): string {
  const prefix = process.env.TEST_PREFIX ?? 'helpdesk_t';
  // It becomes part of a database name and a LIKE pattern: letters, digits and underscores, ending in a letter.
  if (!/^[A-Za-z][A-Za-z0-9_]{0,40}[A-Za-z]$/.test(prefix)) {
    throw new Error(`TEST_PREFIX must be letters, digits and underscores, starting and ending with a letter: ${prefix}`);
  }
  return prefix;
}

/** `LIKE` pattern matching the prefix literally (its underscores escaped). */
export const likePrefix = (prefix: string) => `${prefix.replace(/_/g, '\\_')}%`;
