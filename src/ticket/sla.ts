import { addDays, wallClock, zonedTime } from './timezone';

/**
 * SLA due times (pure). A target in minutes runs from a start instant either on the calendar
 * clock (24/7) or only inside a plan's business hours: one working window per weekday, in the
 * plan's time zone. Outside the windows the clock stops; it carries over nights and weekends
 * (Friday 16:00 + 2 hours of 09:00-17:00 weekdays is Monday 10:00).
 */

/** One weekday's working window, in minutes after local midnight (`end` up to 1440). */
export interface WorkingWindow {
  /** 0 Sunday ... 6 Saturday. */
  day: number;
  start: number;
  end: number;
}

export interface SlaClock {
  businessHours: boolean;
  schedule: readonly WorkingWindow[];
  /** IANA zone of the schedule. */
  timezone: string;
}

/** `09:00` → 540; `24:00` (end of day) → 1440; null when not a time. */
export function parseClockTime(text: string): number | null {
  const m = /^([01]\d|2[0-4]):([0-5]\d)$/.exec(text);
  if (!m) return null;
  const minutes = Number(m[1]) * 60 + Number(m[2]);
  return minutes <= 1440 ? minutes : null;
}

/** 540 → `09:00`. */
export const formatClockTime = (minutes: number): string =>
  `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;

/** Minutes after local midnight between which no time zone changes its clocks (see dueTime). */
const STEADY_FROM = 4 * 60;
const STEADY_UNTIL = 23 * 60;

/** How far business hours may carry a target: ten years (a plan's targets are checked against it, reachable). */
export const MAX_SLA_WEEKS = 522;

/** The minutes of work in a week of the schedule. */
export const weeklyMinutes = (schedule: readonly WorkingWindow[]): number =>
  schedule.reduce((sum, w) => sum + Math.max(0, w.end - w.start), 0);

/**
 * Whether business hours of `schedule` meet a target of `minutes` within MAX_SLA_WEEKS: a few
 * minutes a week and a target of a year of minutes would fall due centuries on, past what a due
 * time column holds, after a walk of one day at a time through them.
 */
export const reachable = (minutes: number, schedule: readonly WorkingWindow[]): boolean =>
  minutes <= weeklyMinutes(schedule) * (MAX_SLA_WEEKS - 2);

/**
 * The instant (UNIX seconds) a target of `minutes` falls due when the clock starts at `start`
 * (UNIX seconds). Null when the plan counts business hours but has no working window, or none
 * within MAX_SLA_WEEKS (a plan stored before targets were checked: `reachable`): nothing falls due.
 */
export function dueTime(start: number, minutes: number, clock: SlaClock, { skipWeeks = true } = {}): number | null {
  let remaining = Math.round(minutes * 60) * 1000;
  if (!clock.businessHours) return start + remaining / 1000;
  const windows = new Map<number, WorkingWindow>();
  for (const w of clock.schedule) if (w.end > w.start) windows.set(w.day, w);
  if (!windows.size) return null;
  // Windows between 04:00 and 23:00 hold no DST change (zones change between midnight and 03:00):
  // each week of them is the same length, so whole weeks can be counted at once rather than walked.
  const week = [...windows.values()].every((w) => w.start >= STEADY_FROM && w.end <= STEADY_UNTIL)
    ? [...windows.values()].reduce((sum, w) => sum + (w.end - w.start) * 60_000, 0) : 0;

  let t = start * 1000;
  let { year, month, day } = wallClock(t, clock.timezone);
  // Each pass is one local day: the time left is spent in its window, the rest carries over.
  for (let days = 0; days <= MAX_SLA_WEEKS * 7; days++) {
    // Past the first day the clock stands before this day's window: the next whole weeks but the
    // last hold `week` of work each (the last is walked, to land in the right window).
    if (skipWeeks && week && days > 0 && remaining > 2 * week) {
      const weeks = Math.min(Math.floor(remaining / week) - 1, Math.floor((MAX_SLA_WEEKS * 7 - days) / 7));
      if (weeks > 0) {
        remaining -= weeks * week;
        days += weeks * 7;
        ({ year, month, day } = addDays(year, month, day, weeks * 7));
      }
    }
    const w = windows.get(new Date(Date.UTC(year, month - 1, day)).getUTCDay());
    if (w) {
      const open = zonedTime(year, month, day, w.start, clock.timezone);
      const close = zonedTime(year, month, day, w.end, clock.timezone);
      if (t < open) t = open;
      if (t < close) {
        if (remaining <= close - t) return Math.ceil((t + remaining) / 1000);
        remaining -= close - t;
        t = close;
      }
    }
    ({ year, month, day } = addDays(year, month, day, 1));
  }
  return null;
}
