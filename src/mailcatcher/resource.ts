import type { ModelCtor } from 'sequelize-typescript';
import { CaughtMail } from '../db/models';
import type { Entity } from '../db/entity';
import { resourceRouter, type ResourceDef } from '../http/resource';

type Caught = CaughtMail & Entity;

export const serializeCaughtMail = (m: CaughtMail) => ({
  id: m.id,
  from: m.mail_from,
  to: m.rcpt_to ? m.rcpt_to.split(', ') : [],
  subject: m.subject,
  message_id: m.message_id,
  headers: m.headers,
  text: m.text,
  html: m.html,
  size: m.size,
  created_at: m.created_at,
  updated_at: m.updated_at,
});

/**
 * `GET /api/core/mailcatcher[/{id}]` (not in the specification; ours): the mails the local mail
 * catcher received, newest kept (MAIL_CATCHER_KEEP). `from` and `to` are the SMTP envelope's.
 */
export const caughtMailResource: ResourceDef<Caught> = {
  path: '/mailcatcher',
  model: CaughtMail as unknown as ModelCtor<Caught>,
  label: 'caught mail',
  actions: ['list', 'show'],
  sortable: ['created_at'],
  serialize: (m) => serializeCaughtMail(m),
};

export const caughtMailRouter = resourceRouter(caughtMailResource);
