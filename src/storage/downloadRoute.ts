import { Router } from 'express';
import { MethodNotAllowedError } from '../http/errors';
import { NotFoundError } from '../errors';
import { parseId } from '../http/resource';
import { recorded } from '../http/routes';
import { cleanFileName, get, mimeOf } from './uploads';

/** A record that attaches a stored file under a name (a ticket's or an article's attachment). */
interface Attached {
  upload_hash: string;
  original_name: string;
}

/**
 * `GET <path>/{id}/download` for an attachment model: the file's bytes under the name it was
 * attached with, typed by that name only (the same bytes may be stored under another), `nosniff`,
 * `Content-Security-Policy: sandbox`;
 * 404 in the envelope for an unknown attachment or a missing file, 405 for other methods.
 */
export function attachmentDownloadRoute(path: string, model: { findByPk(id: number): Promise<Attached | null> }) {
  const route = `${path}/:id/download`;
  const router = Router();
  router.get(route, async (req, res) => {
    const id = parseId(req.params.id);
    const attachment = id === null ? null : await model.findByPk(id);
    const upload = attachment ? await get(attachment.upload_hash) : null;
    if (!attachment || !upload) throw new NotFoundError('attachment');
    res.attachment(cleanFileName(attachment.original_name));
    // The type of this attachment's own name, never the stored upload's: the same bytes may have
    // been stored first as `x.html` and attached now as `x.7z`.
    res.setHeader('Content-Type', mimeOf(attachment.original_name));
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // Opened in a browser after all, the file runs no script and has no origin (no cookies, no API).
    res.setHeader('Content-Security-Policy', 'sandbox');
    res.send(upload.contents);
  });
  router.all(route, (req) => {
    throw new MethodNotAllowedError(req.method, 'GET');
  });
  return recorded(router, [{ method: 'GET', path: route, action: 'download', label: 'attachment' }]);
}
