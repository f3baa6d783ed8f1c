import { createHash } from 'node:crypto';

/** The SHA-256 of bytes, in hex: the address of an upload in every store. */
export const hashOf = (contents: Buffer): string => createHash('sha256').update(contents).digest('hex');
