import { Router } from 'express';
import { ArticleAttachment, type Upload } from '../db/models';
import { HttpError, NotFoundError } from '../http/errors';
import { equals } from '../http/listQuery';
import { resourceRouter, parseId, type ResourceDef } from '../http/resource';
import { recorded } from '../http/routes';
import { pick } from '../http/serialize';
import { field } from '../http/validation';
import { get, loadUploads, serializeUpload } from '../storage/uploads';

/**
 * Article attachments: listed, shown, deleted and downloaded here; added with the article's
 * `attachment[n][filename]` and `attachment[n][contents]`. Deleting one leaves the stored file,
 * which other attachments may share.
 */

export const ATTACHMENT_FIELDS = ['id', 'upload_hash', 'article_id', 'locale', 'original_name', 'created_at', 'updated_at'] as const;

/** The `folder` of self-service uploads, as SupportPal names it. */
const FOLDER = 'selfservice';

export function serializeAttachment(a: ArticleAttachment, upload: Upload | undefined): Record<string, any> {
  return { ...pick(a, ATTACHMENT_FIELDS), upload: upload ? serializeUpload(upload, FOLDER) : null };
}

interface Related {
  uploads: Map<string, Upload>;
}

export const attachmentResource: ResourceDef<ArticleAttachment, Related> = {
  path: '/attachment',
  model: ArticleAttachment,
  label: 'attachment',
  actions: ['list', 'show', 'delete'],
  sortable: ['article_id', 'original_name', 'locale', 'created_at', 'updated_at'],
  filters: { article_id: equals('article_id', field.id()) },
  async load(attachments) {
    return { uploads: await loadUploads(attachments.map((a) => a.upload_hash)) };
  },
  serialize: (a, related) => serializeAttachment(a, related.uploads.get(a.upload_hash)),
};

export const attachmentRouter = resourceRouter(attachmentResource);

const DOWNLOAD = '/attachment/:id/download';

/** `GET /attachment/{id}/download`: the file's bytes, under the name it was attached with. */
const download = Router();
download.get(DOWNLOAD, async (req, res) => {
  const id = parseId(req.params.id);
  const attachment = id === null ? null : await ArticleAttachment.findByPk(id);
  const upload = attachment ? await get(attachment.upload_hash) : null;
  if (!attachment || !upload) throw new NotFoundError('attachment');
  res.attachment(attachment.original_name);
  res.setHeader('Content-Type', upload.mime);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.send(upload.contents);
});
download.all(DOWNLOAD, (req) => {
  throw new HttpError(405, `The ${req.method} method is not supported here. Supported methods: GET.`, { Allow: 'GET' });
});

export const attachmentDownloadRouter = recorded(download, [{ method: 'GET', path: DOWNLOAD, action: 'download', label: 'attachment' }]);
