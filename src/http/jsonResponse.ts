import type { Response } from 'express';

/**
 * `res.json` for this API (installed on the app's response prototype: app.ts). Express's own
 * serialises the body, then `res.send` copies every body over 1,000 characters into a Buffer to
 * measure it, parses the content type to add its charset and checks the request's freshness; this
 * API sends no ETag or Last-Modified (a response is never fresh), no JSONP and no custom replacer,
 * so none of that is done (measured on Node 20: a page of 25 tickets spent 3 % of its CPU there).
 * The body is encoded once into a Buffer, whose length is the header's and which the socket
 * writes as it is: counting a string's bytes and then writing the string encodes it twice, which
 * on Node 24 cost more than the copy (docs/performance.md, Not done yet). Headers and body are
 * what Express sends: `application/json; charset=utf-8`, Content-Length, no body for HEAD.
 * Middleware that wraps `res.json` (the Idempotency-Key's) wraps this.
 */
export function jsonResponse(this: Response, body: unknown): Response {
  const text = JSON.stringify(body);
  const type = this.getHeader('Content-Type');
  if (type === undefined) this.setHeader('Content-Type', 'application/json; charset=utf-8');
  else if (!/;\s*charset=/i.test(String(type))) this.setHeader('Content-Type', `${String(type)}; charset=utf-8`);
  if (text === undefined) {
    // JSON.stringify(undefined): Express sends no body, and no length.
    this.end();
    return this;
  }
  const bytes = Buffer.from(text, 'utf8');
  this.setHeader('Content-Length', bytes.length);
  if (this.req.method === 'HEAD') this.end();
  else this.end(bytes);
  return this;
}
