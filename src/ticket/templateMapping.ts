/**
 * The email templates a department maps (`email_templates`): pure, with no imports, so the mail
 * worker and the notifications read it without loading the department resource.
 */

/** The email templates a department names, in the spec's order (-1: none). */
export const EMAIL_TEMPLATE_KEYS = [
  'user_ticket_opened', 'user_ticket_reply', 'user_ticket_waitingresponse', 'user_ticket_autoclose', 'user_ticket_operatorclose',
  'user_email_attachmentrejected', 'user_ticket_disablereplies', 'operator_assigned', 'operator_ticket_opened',
  'operator_user_ticket_reply', 'operator_internal_opened', 'operator_department_changed', 'operator_operator_ticket_reply',
  'operator_ticket_note',
] as const;

/** The stored JSON of `email_templates` (or an object of some keys) as the full object of the 14 keys. */
export function emailTemplates(stored: string | Record<string, unknown> | null): Record<string, number> {
  let parsed: Record<string, unknown> = {};
  try {
    const value = typeof stored === 'string' ? JSON.parse(stored) : stored ?? {};
    if (value && typeof value === 'object' && !Array.isArray(value)) parsed = value;
  } catch {
    parsed = {};
  }
  const out: Record<string, number> = {};
  for (const key of EMAIL_TEMPLATE_KEYS) {
    const v = Number(parsed[key]);
    out[key] = Number.isSafeInteger(v) && v >= 1 ? v : -1;
  }
  return out;
}
