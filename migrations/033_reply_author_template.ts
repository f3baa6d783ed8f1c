import type { QueryInterface } from 'sequelize';

export const name = '033_reply_author_template';

/**
 * The shipped `operator_user_ticket_reply` named the ticket's user (`{{ user.formatted_name }}`)
 * as the author of a reply: a reply by a CC'd user reached operators as one by the ticket's user.
 * It now names the message's author (`{{ message.user.formatted_name }}`). Templates are seeded
 * once, so installs keep the old rows: a subject or contents still exactly as shipped is updated,
 * each on its own; anything an operator edited (and every translation) stays as it is. The texts
 * are written out here: the seed's may change again.
 */
const TEMPLATE = 'operator_user_ticket_reply';
const OPEN_TICKET = '<p>Open the ticket: <a href="{{ ticket.operator_url }}">{{ ticket.operator_url }}</a></p>';
const contents = (author: string) => [
  '<p>Hi {{ operator.formatted_name }},</p>',
  `<p>{{ ${author}.formatted_name }} replied to ticket #{{ ticket.number }} ({{ ticket.subject }}):</p>`,
  '<p>{{ message.text }}</p>',
  OPEN_TICKET,
].join('\n');
const subject = (author: string) => `[#{{ ticket.number }}]: New reply from {{ ${author}.formatted_name }}`;

export const OLD = { subject: subject('user'), contents: contents('user') };
export const NEW = { subject: subject('message.user'), contents: contents('message.user') };

async function replace(q: QueryInterface, from: typeof OLD, to: typeof OLD): Promise<void> {
  for (const field of ['subject', 'contents'] as const) {
    // BINARY: exactly the shipped text (the column's collation ignores case), never an edit of it.
    await q.sequelize.query(`UPDATE email_templates SET ${field} = ?, updated_at = UNIX_TIMESTAMP() WHERE name = ? AND BINARY ${field} = ?`, {
      replacements: [to[field], TEMPLATE, from[field]],
    });
  }
}

export async function up(q: QueryInterface): Promise<void> {
  await replace(q, OLD, NEW);
}

export async function down(q: QueryInterface): Promise<void> {
  await replace(q, NEW, OLD);
}
