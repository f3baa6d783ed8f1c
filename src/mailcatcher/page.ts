import { Router, type RequestHandler } from 'express';
import { CaughtMail } from '../db/models';
import { parseId } from '../http/resource';
import { escapeHtml } from '../ticket/mail/render';

export const MAIL_PAGE_PATH = '/admin/mail';

/**
 * Nothing but the page's own inline styles: no script at all, no remote image (a mail's tracking
 * pixels stay unloaded), no form. The mail's HTML is shown in a sandboxed frame (`srcdoc`, no
 * `allow-*`): it runs no script and cannot reach this page or its origin.
 */
export const MAIL_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export const mailPageHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', MAIL_PAGE_CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cache-Control', 'no-store');
  next();
};

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;width:100%}
td,th{text-align:left;padding:.3em .6em;border-bottom:1px solid #ddd;vertical-align:top}pre{white-space:pre-wrap;background:#f6f6f6;padding:1em}
iframe{width:100%;height:60vh;border:1px solid #ccc}dt{font-weight:bold}dd{margin:0 0 .5em 0}`;

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>${body}</body></html>`;

const when = (seconds: number) => new Date(seconds * 1000).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';

async function list(): Promise<string> {
  const mails = await CaughtMail.findAll({ attributes: ['id', 'mail_from', 'rcpt_to', 'subject', 'size', 'created_at'], order: [['id', 'DESC']], limit: 200 });
  const rows = mails.map((m) => `<tr><td>${when(m.created_at)}</td><td>${escapeHtml(m.rcpt_to)}</td><td>${escapeHtml(m.mail_from ?? '')}</td>`
    + `<td><a href="${MAIL_PAGE_PATH}/${m.id}">${escapeHtml(m.subject || '(no subject)')}</a></td><td>${m.size}</td></tr>`).join('\n');
  return page('Caught mail', `<h1>Caught mail</h1>
<p>What the help desk sent to the local mail catcher (newest first). Nothing here was delivered.
The same over the API: <code>GET /api/core/mailcatcher</code>.</p>
${mails.length ? `<table><thead><tr><th>Received</th><th>To</th><th>From</th><th>Subject</th><th>Bytes</th></tr></thead><tbody>
${rows}</tbody></table>` : '<p><em>No mail caught yet.</em> Create a ticket and the mail worker sends its notifications here.</p>'}`);
}

function show(m: CaughtMail): string {
  const html = m.html ? `<h2>HTML</h2><iframe sandbox="" srcdoc="${escapeHtml(m.html)}" title="The mail's HTML"></iframe>` : '';
  return page(m.subject ?? 'Caught mail', `<p><a href="${MAIL_PAGE_PATH}">&larr; All caught mail</a></p>
<h1>${escapeHtml(m.subject || '(no subject)')}</h1>
<dl><dt>Received</dt><dd>${when(m.created_at)}</dd><dt>Envelope from</dt><dd>${escapeHtml(m.mail_from ?? '')}</dd>
<dt>Envelope to</dt><dd>${escapeHtml(m.rcpt_to)}</dd></dl>
${html}
<h2>Text</h2><pre>${escapeHtml(m.text ?? '')}</pre>
<h2>Headers</h2><pre>${escapeHtml(m.headers ?? '')}</pre>`);
}

/** `/admin/mail`: the caught mails as a page (mounted behind the API's token auth). */
export function mailPageRouter(): Router {
  const router = Router();
  router.get('/', async (_req, res) => {
    res.type('html').send(await list());
  });
  router.get('/:id', async (req, res) => {
    const id = parseId(req.params.id);
    const mail = id === null ? null : await CaughtMail.findByPk(id);
    if (!mail) {
      res.status(404).type('html').send(page('Not found', `<p>No caught mail ${escapeHtml(String(req.params.id))}. <a href="${MAIL_PAGE_PATH}">All caught mail</a></p>`));
      return;
    }
    res.type('html').send(show(mail));
  });
  return router;
}
