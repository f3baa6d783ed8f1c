import type { SlaPlan, SlaPlanSchedule } from '../db/models';
import { isTimeZone } from '../lib/timezones';
import type { SlaClock } from './sla';

/** The clock a plan's due times run on (sla.ts `dueTime`); `defaultTimezone` is the core setting. */
export function slaClockOf(plan: SlaPlan, schedules: SlaPlanSchedule[], defaultTimezone: string): SlaClock {
  return {
    businessHours: plan.business_hours === 1,
    schedule: schedules.map((s) => ({ day: s.day, start: s.start_minute, end: s.end_minute })),
    timezone: plan.timezone && isTimeZone(plan.timezone) ? plan.timezone : isTimeZone(defaultTimezone) ? defaultTimezone : 'UTC',
  };
}
