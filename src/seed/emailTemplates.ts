import type { EMAIL_TEMPLATE_KEYS } from '../ticket/templateMapping';

/**
 * The email templates an install ships with: one per key a department maps (EMAIL_TEMPLATE_KEYS)
 * plus the feedback request and the notice to a user whose mail reply met a locked ticket. Subjects and contents use Twig-like merge fields, kept as written
 * until the notifications render them: {{ ticket.number }}, {{ ticket.subject }},
 * {{ ticket.frontend_url }}, {{ ticket.operator_url }}, {{ ticket.department.name }},
 * {{ user.formatted_name }} (the ticket's user), {{ operator.formatted_name }}, {{ message.text }},
 * {{ message.user.formatted_name }} (the message's author), {{ feedback.url }}, {{ brand.name }};
 * the verification mail, which is about a person and no ticket: {{ user.formatted_name }},
 * {{ brand.name }}, {{ verification.url }} and {{ verification.hours }}.
 * Ticket subjects carry `[#{{ ticket.number }}]`, which threads replies into their ticket.
 */
export type EmailTemplateName = (typeof EMAIL_TEMPLATE_KEYS)[number] | 'user_feedback_request' | 'user_ticket_locked' | 'user_email_verification';

export interface DefaultEmailTemplate {
  description: string;
  subject: string;
  contents: string;
}

/** A message's text: rich text whose HTML has block elements of its own, so in a `<div>`, never a `<p>` (migration 034). */
const MESSAGE_TEXT = '{{ message.text }}';
const p = (...paragraphs: string[]) => paragraphs.map((t) => (t === MESSAGE_TEXT ? `<div>${t}</div>` : `<p>${t}</p>`)).join('\n');
const signature = 'Kind regards,<br>{{ brand.name }}';
const viewTicket = 'You can view the ticket at any time: <a href="{{ ticket.frontend_url }}">{{ ticket.frontend_url }}</a>';
const openTicket = 'Open the ticket: <a href="{{ ticket.operator_url }}">{{ ticket.operator_url }}</a>';

export const DEFAULT_EMAIL_TEMPLATES: Record<EmailTemplateName, DefaultEmailTemplate> = {
  user_ticket_opened: {
    description: 'Sent to the user when a new ticket is opened.',
    subject: '[#{{ ticket.number }}]: {{ ticket.subject }}',
    contents: p(
      'Dear {{ user.formatted_name }},',
      'Thank you for contacting {{ brand.name }}. Your ticket #{{ ticket.number }} has been opened and a member of our team will reply as soon as possible.',
      '<strong>Subject:</strong> {{ ticket.subject }}',
      '{{ message.text }}',
      viewTicket,
      signature,
    ),
  },
  user_ticket_reply: {
    description: 'Sent to the user (and CC addresses) when an operator replies to a ticket.',
    subject: 'Re: [#{{ ticket.number }}]: {{ ticket.subject }}',
    contents: p('{{ message.text }}', viewTicket, signature),
  },
  user_ticket_waitingresponse: {
    description: 'Sent to the user when a ticket in a status that closes inactive tickets has waited for a reply.',
    subject: '[#{{ ticket.number }}]: We are waiting for your response',
    contents: p(
      'Dear {{ user.formatted_name }},',
      'We have not heard from you about ticket #{{ ticket.number }} ({{ ticket.subject }}). If your issue is resolved there is nothing to do; otherwise please reply, or the ticket will be closed automatically.',
      viewTicket,
      signature,
    ),
  },
  user_ticket_autoclose: {
    description: 'Sent to the user when an inactive ticket is closed automatically.',
    subject: '[#{{ ticket.number }}]: Your ticket has been closed',
    contents: p(
      'Dear {{ user.formatted_name }},',
      'Ticket #{{ ticket.number }} ({{ ticket.subject }}) has been closed because we have not heard from you. Reply to this email if you still need help and the ticket will be reopened.',
      viewTicket,
      signature,
    ),
  },
  user_ticket_operatorclose: {
    description: 'Sent to the user when an operator resolves a ticket.',
    subject: '[#{{ ticket.number }}]: Your ticket has been resolved',
    contents: p(
      'Dear {{ user.formatted_name }},',
      'Ticket #{{ ticket.number }} ({{ ticket.subject }}) has been marked as resolved. Reply to this email if you still need help and the ticket will be reopened.',
      viewTicket,
      signature,
    ),
  },
  user_email_attachmentrejected: {
    description: 'Sent to the user when attachments of an incoming email were rejected.',
    subject: '[#{{ ticket.number }}]: Attachments rejected',
    contents: p(
      'Dear {{ user.formatted_name }},',
      'Your email about ticket #{{ ticket.number }} was received, but one or more of its attachments were rejected because their file type is not allowed or they are too large. Your message was added to the ticket without them.',
      viewTicket,
      signature,
    ),
  },
  user_ticket_disablereplies: {
    description: 'Sent to the user who replies by email to a department that does not accept email replies.',
    subject: '[#{{ ticket.number }}]: Email replies are not accepted',
    contents: p(
      'Dear {{ user.formatted_name }},',
      'Replies by email are not accepted for ticket #{{ ticket.number }}. Please reply through the help desk instead.',
      viewTicket,
      signature,
    ),
  },
  operator_assigned: {
    description: 'Sent to an operator when a ticket is assigned to them.',
    subject: '[#{{ ticket.number }}]: Ticket assigned to you: {{ ticket.subject }}',
    contents: p(
      'Hi {{ operator.formatted_name }},',
      'Ticket #{{ ticket.number }} from {{ user.formatted_name }} has been assigned to you.',
      '<strong>Subject:</strong> {{ ticket.subject }}',
      openTicket,
    ),
  },
  operator_ticket_opened: {
    description: 'Sent to the operators of the department when a new ticket is opened.',
    subject: '[#{{ ticket.number }}]: New ticket: {{ ticket.subject }}',
    contents: p(
      'Hi {{ operator.formatted_name }},',
      '{{ user.formatted_name }} opened ticket #{{ ticket.number }} in {{ ticket.department.name }}.',
      '<strong>Subject:</strong> {{ ticket.subject }}',
      '{{ message.text }}',
      openTicket,
    ),
  },
  operator_user_ticket_reply: {
    description: 'Sent to the operators of a ticket when the user replies.',
    // The reply's author (the ticket's user or one of its CC'd users), not the ticket's user.
    subject: '[#{{ ticket.number }}]: New reply from {{ message.user.formatted_name }}',
    contents: p(
      'Hi {{ operator.formatted_name }},',
      '{{ message.user.formatted_name }} replied to ticket #{{ ticket.number }} ({{ ticket.subject }}):',
      '{{ message.text }}',
      openTicket,
    ),
  },
  operator_internal_opened: {
    description: 'Sent to the operators of the department when an internal ticket is opened.',
    subject: '[#{{ ticket.number }}]: New internal ticket: {{ ticket.subject }}',
    contents: p(
      'Hi {{ operator.formatted_name }},',
      '{{ message.user.formatted_name }} opened internal ticket #{{ ticket.number }} in {{ ticket.department.name }}.',
      '{{ message.text }}',
      openTicket,
    ),
  },
  operator_department_changed: {
    description: 'Sent to the operators of the new department when a ticket moves to it.',
    subject: '[#{{ ticket.number }}]: Ticket moved to {{ ticket.department.name }}',
    contents: p(
      'Hi {{ operator.formatted_name }},',
      'Ticket #{{ ticket.number }} ({{ ticket.subject }}) from {{ user.formatted_name }} was moved to {{ ticket.department.name }}.',
      openTicket,
    ),
  },
  operator_operator_ticket_reply: {
    description: 'Sent to the other operators of a ticket when an operator replies.',
    subject: '[#{{ ticket.number }}]: {{ message.user.formatted_name }} replied',
    contents: p(
      'Hi {{ operator.formatted_name }},',
      '{{ message.user.formatted_name }} replied to ticket #{{ ticket.number }} ({{ ticket.subject }}):',
      '{{ message.text }}',
      openTicket,
    ),
  },
  operator_ticket_note: {
    description: 'Sent to the operators of a ticket when a note is added.',
    subject: '[#{{ ticket.number }}]: New note by {{ message.user.formatted_name }}',
    contents: p(
      'Hi {{ operator.formatted_name }},',
      '{{ message.user.formatted_name }} added a note to ticket #{{ ticket.number }} ({{ ticket.subject }}):',
      '{{ message.text }}',
      openTicket,
    ),
  },
  user_ticket_locked: {
    description: 'Sent to the sender of an email reply to a locked ticket (the reply is not added).',
    subject: '[#{{ ticket.number }}]: This ticket is locked',
    contents: p(
      'Dear {{ user.formatted_name }},',
      'Ticket #{{ ticket.number }} ({{ ticket.subject }}) is locked, so your reply was not added to it. If you need more help, please open a new ticket.',
      signature,
    ),
  },
  user_email_verification: {
    description: 'Sent to a person (a user or an operator) created or updated without a password when the request asks for it (`send_email`): a single-use link to verify their address and choose a password.',
    subject: 'Verify your email address at {{ brand.name }}',
    contents: p(
      'Hello {{ user.formatted_name }},',
      'An account was created for you at {{ brand.name }}. Please verify your email address and choose a password with the link below.',
      'The link can be used once and expires in {{ verification.hours }} hours. If you did not expect this email, you can ignore it.',
      '<a href="{{ verification.url }}">Verify your email address</a>',
    ),
  },
  user_feedback_request: {
    description: 'Sent to the user after a ticket is resolved, asking for feedback (the form\'s email template).',
    subject: '[#{{ ticket.number }}]: How did we do?',
    contents: p(
      'Dear {{ user.formatted_name }},',
      'Your ticket #{{ ticket.number }} ({{ ticket.subject }}) was recently resolved. We would like to hear how we did: it takes a minute.',
      '<a href="{{ feedback.url }}">Rate our support</a>',
      signature,
    ),
  },
};
