import { config } from './config';
import { watchAccessTables } from './auth/accessCache';
import { banExpiryJob } from './core/banExpiry';
import {
  ApiToken, Brand, Channel, CustomField, CustomFieldBrand, CustomFieldDepartment, CustomFieldOption, Department, IpBan, IpWhitelist, Setting, SlaPlan,
  SlaPlanSchedule, SlaPlanTarget, TicketFilter, TicketFilterCondition, TicketPriority, TicketStatus, TicketTag, Translation, Webhook,
} from './db/models';
import { watchDefinitionTables } from './db/definitions';
import { whenModelsReady } from './db/sequelize';
import { subscribe, subscribeToAll, subscribersRegistered } from './events';
import { idempotencyExpiryJob } from './idempotency/expiry';
import { tombstonePruneJob } from './export/prune';
import { eventPruneJob } from './core/eventPrune';
import { searchIndexJob } from './ticket/tickets/search/groongaIndex';
import { dayCounterFoldJob } from './ticket/tickets/dayCounterFold';
import { orderMarksJob } from './ticket/tickets/orderMarks';
import { claimPruneJob } from './queue/claims';
import { outboxPruneJob } from './queue/outboxPrune';
import { uploadPruneJob } from './storage/uploadPrune';
import { directorySweepJob } from './storage/sweepJob';
import { recordingDeliveries } from './mail/deliveries';
import { closeTransports } from './mail/transports';
import { mailboxPollJob } from './mailbox/pollJob';
import { mailRefusal, onUnreadRefused } from './mailbox/refusal';
import { mailboxScheduleJob } from './mailbox/scheduleJob';
import { QUEUES } from './queue/names';
import { outboxSweepJob } from './queue/outboxSweepJob';
import type { WorkerSpec } from './queue/runWorker';
import { autoCloseJob } from './ticket/autoClose';
import { trashPurgeJob } from './ticket/trashPurge';
import { bulkTicketJob } from './ticket/bulk/job';
import { slaPlanRecomputeJob } from './ticket/slaRecompute';
import { cascadeEventsJob } from './ticket/cascadeAudit';
import { watchConfigTables } from './ticket/configCache';
import { feedbackRequestsJob } from './ticket/feedbackRequests';
import { waitingRemindersJob } from './ticket/waitingReminders';
import { ticketMail } from './ticket/mail/job';
import { mroongaSession } from './ticket/tickets/search/mroonga';
import * as ticketNotifications from './ticket/mail/subscribers';
import { verificationIfAsked } from './user/notifications';
import { verificationMail } from './user/verificationMail';
import { webhookDelivery } from './webhooks/deliver';
import { queueWebhookDeliveries } from './webhooks/subscriber';

/**
 * The composition root: the one module that knows every side effect and every job. The web
 * process and each worker entry point call `wire()` before anything else; nothing below imports
 * this file. Events know no subscriber, the outbox knows no job, the database layer knows no
 * domain module: their consumers are registered here. Reads no configuration, so it may run
 * before a process has set its environment.
 */
let wired = false;

export function wire(): void {
  if (wired) return;
  wired = true;
  whenModelsReady((s) => {
    // Every connection's session as the search engine wants it (Mroonga: no match escalation).
    s.addHook('afterConnect', (connection) => mroongaSession(connection as Parameters<typeof mroongaSession>[0]));
    // Cached tokens, and cached ban answers, go stale in every process when these change (auth/accessCache).
    watchAccessTables({ tokens: [ApiToken], bans: [IpBan, IpWhitelist] } as any);
    // Likewise the configuration that ticket reads embed (ticket/configCache).
    watchConfigTables([Brand, Channel, Department, SlaPlan, SlaPlanSchedule, SlaPlanTarget, Setting, TicketPriority, TicketStatus, TicketTag, Translation] as any);
    // And the definitions that writes consult (db/definitions).
    watchDefinitionTables([Brand, CustomField, CustomFieldBrand, CustomFieldDepartment, CustomFieldOption, Setting, Webhook, TicketFilter, TicketFilterCondition] as any);
  });

  // Which side effects each event has: mails decided by the notifications of each area...
  for (const name of ['user.created', 'user.updated', 'operator.created', 'operator.updated'] as const) subscribe(name, verificationIfAsked);
  subscribe('ticket.created', ticketNotifications.onTicketCreated);
  subscribe('ticket.updated', ticketNotifications.onTicketUpdated);
  subscribe('ticket.feedback_requested', ticketNotifications.onFeedbackRequested);
  subscribe('ticket.waiting_response', ticketNotifications.onWaitingResponse);
  subscribe('message.created', ticketNotifications.onMessageCreated);
  subscribe('message.forwarded', ticketNotifications.onMessageForwarded);
  subscribe('mailbox.refused', ticketNotifications.onMailboxRefused);
  subscribe('mailbox.unread_refused', onUnreadRefused);
  // ...then, for every event, the deliveries to the webhooks subscribed to it.
  subscribeToAll(queueWebhookDeliveries);
  subscribersRegistered();
}

/** The mail worker: every job that sends mail through a brand's SMTP server, each leaving a delivery record. */
export const mailSpec = (): WorkerSpec => ({
  queue: QUEUES.mail,
  concurrency: config().mail.concurrency,
  jobs: [recordingDeliveries(verificationMail), recordingDeliveries(ticketMail), recordingDeliveries(mailRefusal)],
  onClose: async () => closeTransports(),
});

/** The webhooks worker: deliveries of events to subscribed URLs. */
export const webhooksSpec = (): WorkerSpec => ({ queue: QUEUES.webhooks, concurrency: config().webhooks.concurrency, jobs: [webhookDelivery] });

/** The scheduler worker: housekeeping, each job added by its job scheduler. */
export const schedulerSpec = (): WorkerSpec => ({
  queue: QUEUES.scheduler,
  // Several at once: one scheduler job at a time let a long bulk change or ticket sweep hold up the
  // outbox sweep (mail lost with a Redis master waited for it), the ban expiry and the rest.
  // Each job is safe beside another run of itself (the sweeps' writes are idempotent or row-locked).
  concurrency: config().schedulerConcurrency,
  // Besides housekeeping, the project's background work that is neither mail, mailbox nor webhook: bulk ticket changes.
  jobs: [
    banExpiryJob, outboxSweepJob, autoCloseJob, waitingRemindersJob, feedbackRequestsJob, idempotencyExpiryJob, bulkTicketJob, tombstonePruneJob, claimPruneJob, outboxPruneJob, eventPruneJob, trashPurgeJob, uploadPruneJob, directorySweepJob,
    slaPlanRecomputeJob, cascadeEventsJob, searchIndexJob, dayCounterFoldJob, orderMarksJob,
  ],
});

/**
 * The mailbox worker: `mailbox.schedule` queues the polls that are due, and MAILBOX_CONCURRENCY
 * polls run at once, so one slow or broken mailbox never holds up the others.
 */
export const mailboxSpec = (): WorkerSpec => ({
  queue: QUEUES.mailbox,
  concurrency: config().mailbox.concurrency,
  jobs: [mailboxScheduleJob, mailboxPollJob],
  // A running poll renews its lock every 5 s. A poll whose worker died holds its job id (and so
  // its mailbox) until the lock lapses and the stalled check hands it on: both are kept short,
  // since running a poll again is harmless (every mail imports once).
  options: { lockDuration: 10_000, stalledInterval: 5_000 },
});
