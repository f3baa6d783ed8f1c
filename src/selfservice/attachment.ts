import { ArticleAttachment, type Upload } from '../db/models';
import { equals } from '../http/listQuery';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { attachmentDownloadRoute } from '../storage/downloadRoute';
import { pick } from '../lib/serialize';
import { field } from '../lib/validation';
import { loadUploads, serializeUpload } from '../storage/uploads';
import { touchArticles } from './article/touch';

/**
 * Article attachments: listed, shown, deleted and downloaded here; added with the article's
 * `attachment[n][filename]` and `attachment[n][contents]`. Deleting one leaves the stored file,
 * which other attachments may share.
 */

export const ATTACHMENT_FIELDS = ['id', 'upload_hash', 'article_id', 'locale', 'original_name', 'created_at', 'updated_at'] as const;

/** The `folder` of self-service uploads, as SupportPal names it. */
const FOLDER = 'selfservice';

export function serializeAttachment(a: ArticleAttachment, upload: Upload | undefined): Record<string, any> {
  return { ...pick(a, ATTACHMENT_FIELDS), upload: upload ? serializeUpload(upload, FOLDER, a) : null };
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
  // Its article changed (it shows its attachments): its updated_at moves and it is an
  // `article.updated`, so that the export and the event feed pass the deletion on.
  async destroy(attachment, { transaction }) {
    await attachment.destroy({ transaction });
    await touchArticles([attachment.article_id], transaction);
  },
  serialize: (a, related) => serializeAttachment(a, related.uploads.get(a.upload_hash)),
};

export const attachmentRouter = resourceRouter(attachmentResource);

export const attachmentDownloadRouter = attachmentDownloadRoute('/attachment', ArticleAttachment);
