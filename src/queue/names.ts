/** Every BullMQ queue of the project. */
export const QUEUES = {
  /** Outgoing mail, sent through each brand's own SMTP server. */
  mail: 'mail',
  /** Polls of department mailboxes over IMAP. */
  mailbox: 'mailbox',
  /** Housekeeping on a schedule: ban expiry, outbox sweep. */
  scheduler: 'scheduler',
  /** Webhook deliveries: one job per event per subscribed webhook. */
  webhooks: 'webhooks',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];
