import { pipeline } from 'node:stream';
import { Router, type Request } from 'express';
import { HttpError, MethodNotAllowedError } from '../http/errors';
import { NotFoundError } from '../errors';
import { parseId } from '../http/resource';
import { recorded } from '../http/routes';
import { logger } from '../logger';
import type { ByteRange } from './blobStore';
import { cleanFileName, findUpload, mimeOf, openUpload, uploadStored } from './uploads';

/** A record that attaches a stored file under a name (a ticket's or an article's attachment). */
interface Attached {
  upload_hash: string;
  original_name: string;
  created_at: number;
}

/**
 * `GET <path>/{id}/download` for an attachment model: the file's bytes under the name it was
 * attached with, typed by that name only (the same bytes may be stored under another), `nosniff`,
 * `Content-Security-Policy: sandbox`; streamed from its store, never held whole in memory (the
 * directory store). Byte ranges: `Accept-Ranges: bytes`; one range answers 206 with
 * `Content-Range`; a range outside the file 416 with `Content-Range: bytes *\/<size>`; several
 * ranges are answered with the whole file (200), as HTTP allows; `If-Range` with another ETag or
 * date also gets the whole file. The ETag is the content's SHA-256 (the bytes of a hash never change),
 * so `If-None-Match` answers 304.
 * 404 in the envelope for an unknown attachment or a missing file (HEAD too: it looks for the file
 * without reading it), 405 for other methods.
 */
export function attachmentDownloadRoute(path: string, model: { findByPk(id: number): Promise<Attached | null> }) {
  const route = `${path}/:id/download`;
  const router = Router();
  router.get(route, async (req, res) => {
    const id = parseId(req.params.id);
    const attachment = id === null ? null : await model.findByPk(id);
    const upload = attachment ? await findUpload(attachment.upload_hash) : null;
    if (!attachment || !upload) throw new NotFoundError('attachment');
    const size = Number(upload.size);
    const etag = `"${upload.hash}"`;
    // The attachment's own time: the stored row's is when the bytes were first attached, perhaps elsewhere.
    const lastModified = new Date(attachment.created_at * 1000).toUTCString();
    res.setHeader('ETag', etag);
    res.setHeader('Last-Modified', lastModified);
    if (req.fresh) {
      res.status(304).end();
      return;
    }
    const range = requestedRange(req, size, etag, lastModified);
    if (range === 'unsatisfiable') throw new HttpError(416, 'The requested range is not satisfiable.', { 'Content-Range': `bytes */${size}` });
    // HEAD answers as GET would (RFC 9110 9.3.2): the bytes must be there, though they are not read.
    const head = req.method === 'HEAD';
    const body = head ? null : await openUpload(upload, range ?? undefined);
    if (head ? !(await uploadStored(upload)) : !body) {
      logger.error({ hash: upload.hash, storage: upload.storage }, 'the bytes of an upload are missing from its store');
      throw new NotFoundError('attachment');
    }
    res.attachment(cleanFileName(attachment.original_name));
    // The type of this attachment's own name, never the stored upload's: the same bytes may have
    // been stored first as `x.html` and attached now as `x.7z`.
    res.setHeader('Content-Type', mimeOf(attachment.original_name));
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // Opened in a browser after all, the file runs no script and has no origin (no cookies, no API).
    res.setHeader('Content-Security-Policy', 'sandbox');
    res.setHeader('Accept-Ranges', 'bytes');
    if (range) {
      res.status(206);
      res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
    }
    res.setHeader('Content-Length', String(range ? range.end - range.start + 1 : size));
    if (!body) {
      res.end();
      return;
    }
    pipeline(body, res, (err) => {
      // A client that goes away mid-download is no error of ours; a store that fails mid-way is.
      if (err && !res.writableFinished && (err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') {
        logger.error({ err, hash: upload.hash, storage: upload.storage }, 'an upload stopped streaming');
      }
    });
  });
  router.all(route, (req) => {
    throw new MethodNotAllowedError(req.method, 'GET');
  });
  return recorded(router, [{ method: 'GET', path: route, action: 'download', label: 'attachment' }]);
}

/**
 * The one byte range a request asks for; null for the whole file (no `Range`, one that is not
 * `bytes` or is malformed or invalid, several ranges, or an `If-Range` that no longer matches).
 */
function requestedRange(req: Request, size: number, etag: string, lastModified: string): ByteRange | 'unsatisfiable' | null {
  const header = req.headers.range;
  if (!header || !/^\s*bytes=/i.test(header)) return null;
  const ifRange = req.headers['if-range'];
  if (ifRange !== undefined && ifRange !== etag && ifRange !== lastModified) return null;
  if (hasInvalidRangeSpec(header)) return null;
  const ranges = req.range(size, { combine: true });
  if (ranges === -1) return 'unsatisfiable';
  if (ranges === -2 || ranges === undefined || ranges.type !== 'bytes' || ranges.length !== 1) return null;
  return { start: ranges[0].start, end: ranges[0].end };
}

/**
 * Whether a `bytes=` header holds a range whose last position is before its first (`5-2`): an
 * invalid range-spec (RFC 9110 14.1.1), which makes the header one to ignore, as a malformed one.
 * range-parser skips such a spec and, left with none, answers -1 (unsatisfiable, a 416), which is
 * for a range that starts past the end of the file.
 */
function hasInvalidRangeSpec(header: string): boolean {
  return header.slice(header.indexOf('=') + 1).split(',').some((spec) => {
    const m = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(spec);
    return m !== null && BigInt(m[2]) < BigInt(m[1]);
  });
}
