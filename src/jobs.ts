import { mailRefusal } from './mailbox/refusal';
import type { JobDefinition } from './queue/jobs';
import type { QueueName } from './queue/names';
import { ticketMail } from './ticket/mail/job';
import { verificationMail } from './user/verificationMail';
import { webhookDelivery } from './webhooks/deliver';

/** Every job of the project (defined in the areas that own them). */
export const ALL_JOBS: readonly JobDefinition[] = [verificationMail, ticketMail, webhookDelivery, mailRefusal];

const byName = new Map(ALL_JOBS.map((j) => [j.name, j]));

export const jobNamed = (name: string): JobDefinition | undefined => byName.get(name);

export const jobsOn = (queue: QueueName): JobDefinition[] => ALL_JOBS.filter((j) => j.queue === queue);
