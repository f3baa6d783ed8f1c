import type { Test } from 'supertest';

/** The request with its answer's body read as raw bytes (a Buffer), whatever its content type: a download. */
export const asBytes = (req: Test): Test => req.buffer(true).parse((res, cb) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
});
