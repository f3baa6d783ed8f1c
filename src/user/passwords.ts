import argon2 from 'argon2';

/** Passwords are stored as argon2id hashes; the hash is never returned or logged. */
export const hashPassword = (password: string): Promise<string> => argon2.hash(password, { type: argon2.argon2id });

export const verifyPassword = (hash: string, password: string): Promise<boolean> => argon2.verify(hash, password).catch(() => false);
