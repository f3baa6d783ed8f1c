import { Op } from 'sequelize';
import { currentActor, runAs, type Actor } from '../audit/actor';
import { Ticket } from '../db/models';
import { transaction } from '../db/transaction';
import { enqueue } from '../queue/outbox';
import { defineJob } from '../queue/jobs';
import { QUEUES } from '../queue/names';
import { Joi, field } from '../lib/validation';
import { recomputeDueTimes } from './dueTimes';

/** Tickets one run recomputes, in one transaction; the next batch is the next run's. */
const BATCH = 200;

/**
 * After an SLA plan's clock or targets changed (its schedule, business hours, time zone or
 * targets): every ticket on the plan gets its due times again from the new ones, as a ticket
 * whose priority changes does (`recomputeDueTimes`). A batch at a time in id order, each in one
 * transaction that also queues the next batch: a plan held by many tickets is never one long
 * transaction, and a crash resumes where the last committed batch ended. A ticket whose times do
 * not change is not written. The job carries the actor of the plan's edit (the token) from batch to
 * batch: each ticket's audit entry and `ticket.updated` event are that actor's.
 */
export const slaPlanRecomputeJob = defineJob<{ planId: number; afterId: number; actor?: Actor }>({
  name: 'sla.recompute',
  // The scheduler's worker runs the project's background work besides mail, mailboxes and webhooks.
  queue: QUEUES.scheduler,
  schema: Joi.object({
    planId: field.id().required(), afterId: Joi.number().integer().min(0).default(0),
    actor: Joi.object({ type: Joi.string().required(), id: Joi.number().integer().allow(null).required(), channel: Joi.string().required() }),
  }),
  options: () => ({ attempts: 5, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: 1000, removeOnFail: 5000 }),
  async handle({ planId, afterId, actor }) {
    // As the actor who edited the plan (a job queued before the actor was carried: the system).
    return runAs(actor ?? currentActor(), () => transaction(async (t) => {
      const batch = await Ticket.findAll({
        attributes: ['id'], where: { sla_plan_id: planId, id: { [Op.gt]: afterId } }, order: [['id', 'ASC']], limit: BATCH, transaction: t,
      });
      for (const { id } of batch) await recomputeDueTimes(id, t);
      if (batch.length === BATCH) await enqueue(t, slaPlanRecomputeJob, { planId, afterId: batch[batch.length - 1].id, ...(actor ? { actor } : {}) });
      return { recomputed: batch.length };
    }));
  },
});
