import type { Job } from 'bullmq';
import { UnrecoverableError } from 'bullmq';
import { MailDelivery } from '../db/models';
import { now } from '../db/entity';
import { transaction } from '../db/transaction';
import { emit } from '../events';
import { logger } from '../logger';
import { mailsTotal } from '../ops/metrics';
import type { JobDefinition } from '../queue/jobs';
import { markProcessed } from '../queue/outbox';
import { sentMails, type SentMail } from './transports';

const isFinal = (job: Job, err: unknown) => err instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);

/**
 * Writes (or updates) the delivery record of the job's outbox entry, and its event, in one
 * transaction; a mail that is out (`done`) also marks its entry processed there, so a crash after
 * that commit cannot send it again (the window left is the SMTP answer to this commit).
 */
async function record(outboxId: number, values: Partial<MailDelivery>, event?: 'mail.delivered' | 'mail.failed', done = false) {
  await transaction(async (t) => {
    const existing = await MailDelivery.findOne({ where: { outbox_id: outboxId }, transaction: t, lock: t.LOCK.UPDATE });
    if (existing) await existing.update(values, { transaction: t });
    else await MailDelivery.create({ outbox_id: outboxId, attempts: 0, ...values }, { transaction: t });
    if (event) await emit(t, event, { outboxId });
    if (done) await markProcessed(outboxId, t);
  });
}

const describe = (mail: SentMail | undefined) => (mail ? { recipients: mail.recipients.slice(0, 1024), subject: mail.subject?.slice(0, 998) ?? null } : {});

/**
 * A mail job that leaves a delivery record (`GET /api/core/mail`): queued with the last error while
 * it is retried, then sent (with the SMTP server's answer), failed (out of attempts), or skipped
 * (the handler found nothing to send). Sent and failed are also events (`mail.delivered`,
 * `mail.failed`). Only outbox jobs have a record: the others have no entry to hang it on.
 */
export function recordingDeliveries<P>(def: JobDefinition<P>): JobDefinition<P> {
  return {
    ...def,
    async handle(payload, job) {
      const outboxId = Number(job.data?.outboxId) || undefined;
      const mails: SentMail[] = [];
      const attempts = job.attemptsMade + 1;
      let result: unknown;
      try {
        result = await sentMails.run(mails, () => def.handle(payload, job));
      } catch (err) {
        const final = isFinal(job, err);
        const tried = mails[mails.length - 1];
        if (outboxId) {
          await record(outboxId, {
            status: final ? 'failed' : 'queued', ...describe(tried), smtp_response: tried?.response ?? null,
            error: (err as Error).message, attempts, ...(final ? { failed_at: now() } : {}),
          }, final ? 'mail.failed' : undefined);
        }
        mailsTotal.inc({ outcome: final ? 'failed' : 'retry' });
        throw err;
      }
      const sent = mails.find((m) => !m.error);
      mailsTotal.inc({ outcome: sent ? 'sent' : 'skipped' });
      // The mail is out: failing to record it must not make the job run (and send) again.
      if (outboxId) {
        await record(outboxId, sent
          ? { status: 'sent', ...describe(sent), message_id: sent.messageId, smtp_response: sent.response, error: null, attempts, sent_at: now() }
          : { status: 'skipped', error: null, attempts, smtp_response: null }, sent ? 'mail.delivered' : undefined, true)
          .catch((err) => logger.error({ outboxId, reason: (err as Error).message }, 'mail sent, but its delivery record could not be written'));
      }
      return result;
    },
  };
}
