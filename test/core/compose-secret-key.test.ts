/**
 * The compose file gives its processes a SECRET_KEY (the image runs in production, which refuses
 * to store secrets without one): the user's, or a development default that says it is public.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { encryptWith, decryptWith, keyRing } from '../../src/crypto/secrets';

const compose = readFileSync(join(__dirname, '../../docker-compose.yml'), 'utf8');

describe('docker-compose.yml and SECRET_KEY', () => {
  it('passes the user\'s SECRET_KEY, else a default production accepts and whose value says it is public', () => {
    const m = /^ {4}SECRET_KEY: \$\{SECRET_KEY:-([^}]+)\}$/m.exec(compose);
    expect(m).not.toBeNull();
    const fallback = m![1];
    expect(fallback).toMatch(/PUBLIC/);
    expect(fallback).toMatch(/NOT-SECRET/);
    const cfg = loadConfig({ NODE_ENV: 'production', SECRET_KEY: fallback, SECRET_KEY_PREVIOUS: '' });
    const ring = keyRing(cfg); // production with a key: no SecretKeyMissingError
    expect(decryptWith(ring, encryptWith(ring.current, 'hunter2', 'p'), 'p')).toBe('hunter2');
    // Moving off it, as docs/operations.md#docker says: the old key in SECRET_KEY_PREVIOUS still decrypts.
    const stored = encryptWith(ring.current, 'hunter2', 'p');
    const moved = keyRing(loadConfig({ NODE_ENV: 'production', SECRET_KEY: 'a'.repeat(64), SECRET_KEY_PREVIOUS: fallback }));
    expect(decryptWith(moved, stored, 'p')).toBe('hunter2');
    expect(compose).toMatch(/^ {4}SECRET_KEY_PREVIOUS: \$\{SECRET_KEY_PREVIOUS:-\}$/m);
  });
});
