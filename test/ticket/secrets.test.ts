import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from '../../src/config';
import {
  DEVELOPMENT_KEY, MAILBOX_PASSWORD, SecretDecryptError, SecretKeyMissingError, TEST_KEY, decryptSecret, decryptWith, encryptSecret,
  encryptWith, keyId, keyRing, needsReencryption,
} from '../../src/crypto/secrets';

describe('secrets (AES-256-GCM)', () => {
  const key = randomBytes(32);
  const older = randomBytes(32);

  it('encrypts to a versioned, key-tagged value that decrypts back', () => {
    const stored = encryptWith(key, 'hunter2 — ünïcode', MAILBOX_PASSWORD);
    expect(stored).toMatch(new RegExp(`^v1:${keyId(key)}:[A-Za-z0-9+/]+=*$`));
    expect(stored).not.toContain('hunter2');
    expect(decryptWith({ current: key, previous: [] }, stored, MAILBOX_PASSWORD)).toBe('hunter2 — ünïcode');
  });

  it('uses a fresh IV every time', () => {
    expect(encryptWith(key, 'same', 'p')).not.toBe(encryptWith(key, 'same', 'p'));
  });

  it('decrypts values of a previous key (rotation), and says which need re-encrypting', () => {
    const old = encryptWith(older, 'rotated', 'p');
    expect(decryptWith({ current: key, previous: [older] }, old, 'p')).toBe('rotated');
    expect(() => decryptWith({ current: key, previous: [] }, old, 'p')).toThrow(new SecretDecryptError(`The stored secret was encrypted with a key that is not configured (key id ${keyId(older)}).`));
  });

  it('refuses a tampered value, another purpose, or another format', () => {
    const stored = encryptWith(key, 'secret', 'a');
    const ring = { current: key, previous: [] };
    const raw = Buffer.from(stored.split(':')[2], 'base64');
    raw[raw.length - 1] ^= 1;
    expect(() => decryptWith(ring, `v1:${keyId(key)}:${raw.toString('base64')}`, 'a')).toThrow(SecretDecryptError);
    expect(() => decryptWith(ring, stored, 'b')).toThrow(SecretDecryptError);
    expect(() => decryptWith(ring, 'secret', 'a')).toThrow('The stored secret is not in a known format.');
    expect(() => decryptWith(ring, `v1:${keyId(key)}:AAAA`, 'a')).toThrow('The stored secret is truncated.');
  });

  it('uses the fixed test key in tests when SECRET_KEY is not set', () => {
    const stored = encryptSecret('pw', MAILBOX_PASSWORD);
    expect(stored.split(':')[1]).toBe(keyId(TEST_KEY));
    expect(decryptSecret(stored, MAILBOX_PASSWORD)).toBe('pw');
    expect(needsReencryption(stored)).toBe(false);
    expect(needsReencryption(encryptWith(key, 'pw', MAILBOX_PASSWORD))).toBe(true);
  });
});

describe('keys by environment', () => {
  it('SECRET_KEY wins everywhere; without it: test key, development key with a warning, production refuses', () => {
    const key = randomBytes(32);
    for (const NODE_ENV of ['test', 'development', 'production']) {
      expect(keyRing(loadConfig({ NODE_ENV, SECRET_KEY: key.toString('hex') })).current).toEqual(key);
    }
    expect(keyRing(loadConfig({ NODE_ENV: 'test' })).current).toEqual(TEST_KEY);
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(keyRing(loadConfig({ NODE_ENV: 'development' })).current).toEqual(DEVELOPMENT_KEY);
      expect(write).toHaveBeenCalledWith(expect.stringContaining('WARNING: SECRET_KEY is not set.'));
    } finally {
      write.mockRestore();
    }
    expect(() => keyRing(loadConfig({ NODE_ENV: 'production' }))).toThrow(SecretKeyMissingError);
  });
});

describe('SECRET_KEY configuration', () => {
  const hex = randomBytes(32).toString('hex');
  it('reads 64 hex characters or base64 of 32 bytes', () => {
    expect(loadConfig({ SECRET_KEY: hex }).secrets.key).toEqual(Buffer.from(hex, 'hex'));
    const b = randomBytes(32);
    expect(loadConfig({ SECRET_KEY: b.toString('base64') }).secrets.key).toEqual(b);
    expect(loadConfig({ SECRET_KEY: b.toString('base64url') }).secrets.key).toEqual(b);
    expect(loadConfig({}).secrets).toEqual({ key: undefined, previousKeys: [] });
  });

  it('reads previous keys, comma-separated', () => {
    const other = randomBytes(32);
    expect(loadConfig({ SECRET_KEY: hex, SECRET_KEY_PREVIOUS: `${other.toString('hex')}, ${hex}` }).secrets.previousKeys)
      .toEqual([other, Buffer.from(hex, 'hex')]);
  });

  it.each([
    ['SECRET_KEY', 'secret'],
    ['SECRET_KEY', 'ab'.repeat(31)],
    ['SECRET_KEY', randomBytes(16).toString('base64')],
    ['SECRET_KEY_PREVIOUS', `${'ab'.repeat(32)},short`],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(name);
    expect((error as Error).message).toContain('must be 32 bytes written as 64 hex characters or as base64');
  });
});
