import type { QueryInterface } from 'sequelize';

export const name = '034_message_text_block';

/**
 * The shipped templates put `{{ message.text }}` in a `<p>`: a message's text is rich text whose
 * HTML has block elements of its own (paragraphs, lists, quotes), and a block inside a paragraph
 * is invalid HTML that mail clients render each in their own way. It now stands in a `<div>`.
 * Templates are seeded once, so installs keep the old rows: contents still exactly as shipped are
 * updated (as migration 033 did); anything an operator edited (and every translation) stays as it
 * is. The texts are written out here: the seed's may change again.
 */
const VIEW_TICKET = '<p>You can view the ticket at any time: <a href="{{ ticket.frontend_url }}">{{ ticket.frontend_url }}</a></p>';
const SIGNATURE = '<p>Kind regards,<br>{{ brand.name }}</p>';
const OPEN_TICKET = '<p>Open the ticket: <a href="{{ ticket.operator_url }}">{{ ticket.operator_url }}</a></p>';
const HI_OPERATOR = '<p>Hi {{ operator.formatted_name }},</p>';

/** Each template's contents, with the message's text as given (`<p>…</p>` before, `<div>…</div>` now). */
const TEMPLATES: Record<string, (text: string) => string> = {
  user_ticket_opened: (text) => [
    '<p>Dear {{ user.formatted_name }},</p>',
    '<p>Thank you for contacting {{ brand.name }}. Your ticket #{{ ticket.number }} has been opened and a member of our team will reply as soon as possible.</p>',
    '<p><strong>Subject:</strong> {{ ticket.subject }}</p>',
    text, VIEW_TICKET, SIGNATURE,
  ].join('\n'),
  user_ticket_reply: (text) => [text, VIEW_TICKET, SIGNATURE].join('\n'),
  operator_ticket_opened: (text) => [
    HI_OPERATOR,
    '<p>{{ user.formatted_name }} opened ticket #{{ ticket.number }} in {{ ticket.department.name }}.</p>',
    '<p><strong>Subject:</strong> {{ ticket.subject }}</p>',
    text, OPEN_TICKET,
  ].join('\n'),
  operator_user_ticket_reply: (text) => [
    HI_OPERATOR, '<p>{{ message.user.formatted_name }} replied to ticket #{{ ticket.number }} ({{ ticket.subject }}):</p>', text, OPEN_TICKET,
  ].join('\n'),
  operator_internal_opened: (text) => [
    HI_OPERATOR, '<p>{{ message.user.formatted_name }} opened internal ticket #{{ ticket.number }} in {{ ticket.department.name }}.</p>', text, OPEN_TICKET,
  ].join('\n'),
  operator_operator_ticket_reply: (text) => [
    HI_OPERATOR, '<p>{{ message.user.formatted_name }} replied to ticket #{{ ticket.number }} ({{ ticket.subject }}):</p>', text, OPEN_TICKET,
  ].join('\n'),
  operator_ticket_note: (text) => [
    HI_OPERATOR, '<p>{{ message.user.formatted_name }} added a note to ticket #{{ ticket.number }} ({{ ticket.subject }}):</p>', text, OPEN_TICKET,
  ].join('\n'),
};

const contentsOf = (text: string): Record<string, string> => Object.fromEntries(Object.entries(TEMPLATES).map(([n, c]) => [n, c(text)]));

export const OLD = contentsOf('<p>{{ message.text }}</p>');
export const NEW = contentsOf('<div>{{ message.text }}</div>');

async function replace(q: QueryInterface, from: Record<string, string>, to: Record<string, string>): Promise<void> {
  for (const template of Object.keys(TEMPLATES)) {
    // BINARY: exactly the shipped text (the column's collation ignores case), never an edit of it.
    await q.sequelize.query('UPDATE email_templates SET contents = ?, updated_at = UNIX_TIMESTAMP() WHERE name = ? AND BINARY contents = ?', {
      replacements: [to[template], template, from[template]],
    });
  }
}

export async function up(q: QueryInterface): Promise<void> {
  await replace(q, OLD, NEW);
}

export async function down(q: QueryInterface): Promise<void> {
  await replace(q, NEW, OLD);
}
