import type { Transaction } from 'sequelize';
import { SlaPlan, SlaPlanSchedule, SlaPlanTarget } from '../../db/models';
import { dueTime } from '../sla';
import { slaClockOf } from '../slaClock';

/** When a ticket's first reply and its resolution are due under an SLA plan. */
export interface DueTimes {
  reply_due_time: number | null;
  resolve_due_time: number | null;
}

/** No due times, shared: frozen, so that a caller that sets a time on it throws instead of setting it for every ticket after. */
export const NO_DUE_TIMES: Readonly<DueTimes> = Object.freeze({ reply_due_time: null, resolve_due_time: null });

/**
 * The due times of a ticket of `priorityId` under the plan, counted from `start` (the ticket's
 * creation): the plan's targets for that priority, on its clock (calendar or business hours).
 * A priority the plan sets no target for has no due time.
 */
export async function slaDueTimes(planId: number, priorityId: number, start: number, defaultTimezone: string, transaction?: Transaction): Promise<DueTimes> {
  const [plan, schedules, target] = await Promise.all([
    SlaPlan.findByPk(planId, { transaction }),
    SlaPlanSchedule.findAll({ where: { plan_id: planId }, transaction }),
    SlaPlanTarget.findOne({ where: { plan_id: planId, priority_id: priorityId }, transaction }),
  ]);
  if (!plan || !target) return { ...NO_DUE_TIMES };
  const clock = slaClockOf(plan, schedules, defaultTimezone);
  return {
    reply_due_time: target.first_reply ? dueTime(start, target.first_reply, clock) : null,
    resolve_due_time: target.resolution ? dueTime(start, target.resolution, clock) : null,
  };
}

/** The due time that applies: the first reply's until an operator has replied, then the resolution's. */
export function currentDueTime(t: { first_reply_time: number | null; reply_due_time: number | null; resolve_due_time: number | null }): number | null {
  return t.first_reply_time ? t.resolve_due_time : (t.reply_due_time ?? t.resolve_due_time);
}
