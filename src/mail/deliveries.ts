import type { Job } from 'bullmq';
import { UnrecoverableError } from 'bullmq';
import { MailDelivery } from '../db/models';
import { now } from '../db/entity';
import { transaction } from '../db/transaction';
import { execute } from '../db/select';
import { emit } from '../events';
import { logger } from '../logger';
import { mailsTotal } from '../ops/metrics';
import type { JobDefinition } from '../queue/jobs';
import { markProcessed } from '../queue/outbox';
import { describeRefused, isPermanentRefusal, sentMails, type SentMail } from './transports';

const isFinal = (job: Job, err: unknown) => err instanceof UnrecoverableError || isPermanentRefusal(err) || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);

/**
 * Writes (or updates) the delivery record of the job's outbox entry, and its event, in one
 * transaction; a mail that is out (`done`) also marks its entry processed there, so a crash after
 * that commit cannot send it again (the window left is the SMTP answer to this commit).
 */
type DeliveryEvent = 'mail.delivered' | 'mail.failed' | 'mail.recipients_refused';

/** The record's columns a job writes (bounces are the mailbox worker's). */
const RECORDED = ['status', 'recipients', 'subject', 'message_id', 'smtp_response', 'error', 'attempts', 'sent_at', 'failed_at'] as const;
type Recorded = Partial<Pick<MailDelivery, (typeof RECORDED)[number]>>;

async function record(outboxId: number, values: Recorded, events: DeliveryEvent[] = [], done = false) {
  await transaction(async (t) => {
    // One upsert (outbox_id is unique), not a locking read then an insert: a read FOR UPDATE of a
    // record not written yet locks the index's gap, which every worker recording a first attempt
    // at once shares, so their inserts waited on each other's gap, deadlocked past every retry
    // and lost the record and its event of a mail that was sent.
    const row: Recorded = { attempts: 0, ...values };
    const columns = RECORDED.filter((c) => row[c] !== undefined);
    const at = now();
    await execute(
      `INSERT INTO mail_deliveries (outbox_id, ${columns.join(', ')}, created_at, updated_at) VALUES (?, ${columns.map(() => '?').join(', ')}, ?, ?)
       ON DUPLICATE KEY UPDATE ${columns.filter((c) => c in values).map((c) => `${c} = VALUES(${c})`).concat('updated_at = VALUES(updated_at)').join(', ')}`,
      [outboxId, ...columns.map((c) => row[c]), at, at], t,
    );
    for (const event of events) await emit(t, event, { outboxId });
    if (done) await markProcessed(outboxId, t);
  });
}

/** The length of the record's `recipients` column. */
const RECIPIENTS_MAX = 1024;

/** The recipients as the record keeps them: comma-separated, cut between two addresses (`… and 12 more`) when they do not fit. */
function recipientList(addresses: string[]): string {
  const all = addresses.join(', ');
  if (all.length <= RECIPIENTS_MAX) return all;
  const room = RECIPIENTS_MAX - ` and ${addresses.length} more`.length;
  let kept = 0;
  while (kept < addresses.length && addresses.slice(0, kept + 1).join(', ').length <= room) kept++;
  return `${addresses.slice(0, kept).join(', ')} and ${addresses.length - kept} more`;
}

const describe = (mail: SentMail | undefined) => (mail ? { recipients: recipientList(mail.recipients), subject: mail.subject?.slice(0, 998) ?? null } : {});

/** What the record's `error` says of a mail the server took but not for every recipient. */
const refusal = (mail: SentMail) => `The SMTP server refused ${mail.refused.length} of ${mail.recipients.length} recipients: ${describeRefused(mail.refused)}`;

/**
 * A mail job that leaves a delivery record (`GET /api/core/mail`): queued with the last error while
 * it is retried, then sent (with the SMTP server's answer), failed (out of attempts, or at once
 * when the server refused the mail for good: a 5xx, isPermanentRefusal), or skipped
 * (the handler found nothing to send). Sent and failed are also events (`mail.delivered`,
 * `mail.failed`). A mail sent that the server refused for some of its recipients says which and
 * why in its `error`, with the event `mail.recipients_refused` and a log line. Only outbox jobs
 * have a record: the others have no entry to hang it on.
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
        // The mail is out and what the job does after the send failed (recording its Message-ID met
        // a deadlock or a timeout): it is recorded as sent below, not retried, which would send it again.
        if (mails.some((m) => !m.error)) {
          logger.error({ job: job.name, outboxId, reason: (err as Error).message }, 'mail sent, but the work after it failed; not sent again');
        } else {
          const final = isFinal(job, err);
          const tried = mails[mails.length - 1];
          if (outboxId) {
            await record(outboxId, {
              status: final ? 'failed' : 'queued', ...describe(tried), smtp_response: tried?.response ?? null,
              error: (err as Error).message, attempts, ...(final ? { failed_at: now() } : {}),
            }, final ? ['mail.failed'] : []);
          }
          mailsTotal.inc({ outcome: final ? 'failed' : 'retry' });
          // A permanent refusal (5xx) fails the job now: BullMQ does not retry an UnrecoverableError.
          throw isPermanentRefusal(err) ? new UnrecoverableError((err as Error).message) : err;
        }
      }
      const sent = mails.find((m) => !m.error);
      mailsTotal.inc({ outcome: sent ? 'sent' : 'skipped' });
      // Taken for some recipients, refused for others: the record and an event say which and why.
      const partly = !!sent?.refused.length;
      if (partly) logger.warn({ job: job.name, outboxId, refused: sent!.refused.length, recipients: sent!.recipients.length }, 'the SMTP server refused some recipients of a mail');
      // The mail is out: failing to record it must not make the job run (and send) again.
      if (outboxId) {
        await record(outboxId, sent
          ? { status: 'sent', ...describe(sent), message_id: sent.messageId, smtp_response: sent.response, error: partly ? refusal(sent) : null, attempts, sent_at: now() }
          : { status: 'skipped', error: null, attempts, smtp_response: null }, sent ? ['mail.delivered', ...(partly ? ['mail.recipients_refused' as const] : [])] : [], true)
          .catch((err) => logger.error({ outboxId, reason: (err as Error).message }, 'mail sent, but its delivery record could not be written'));
      }
      return result;
    },
    // Failed without the handler's last attempt recording it (its worker stopped while sending it,
    // more often than allowed): the record fails, with `mail.failed`, rather than stay queued.
    async failed(payload, reason, job) {
      await def.failed?.(payload, reason, job);
      const outboxId = Number(job.data?.outboxId) || undefined;
      if (!outboxId) return;
      const stored = await MailDelivery.findOne({ attributes: ['status'], where: { outbox_id: outboxId } });
      if (stored && stored.status !== 'queued') return;
      await record(outboxId, { status: 'failed', error: `Not sent: ${reason}.`, failed_at: now() }, ['mail.failed']);
      mailsTotal.inc({ outcome: 'failed' });
    },
  };
}
