/**
 * Wall-clock time in an IANA time zone, with nothing but Intl (pure; used by ticket numbers and
 * SLA due times). Zones come from stored records, already checked by `isTimeZone`
 * (src/lib/timezones.ts), so the formatter cache holds only names the help desk uses.
 */

export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** 0 Sunday ... 6 Saturday. */
  weekday: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    formatters.set(timezone, f);
  }
  return f;
}

/** Day of the week of a calendar date: 0 Sunday ... 6 Saturday. */
export const weekdayOf = (year: number, month: number, day: number): number => new Date(Date.UTC(year, month - 1, day)).getUTCDay();

/** The wall clock in `timezone` at the instant `ms` (UNIX milliseconds). */
export function wallClock(ms: number, timezone: string): WallClock {
  const parts: Record<string, number> = {};
  for (const p of formatter(timezone).formatToParts(new Date(ms))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const { year, month, day } = parts;
  return { year, month, day, hour: parts.hour % 24, minute: parts.minute, second: parts.second, weekday: weekdayOf(year, month, day) };
}

/** How far the zone's wall clock is ahead of UTC at the instant `ms`, in milliseconds. */
function offsetAt(ms: number, timezone: string): number {
  const w = wallClock(ms, timezone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(ms / 1000) * 1000;
}

const DAY_MS = 86_400_000;

/**
 * The instant (UNIX milliseconds) at which the wall clock in `timezone` shows the date at
 * `minutes` past midnight (1440 is the next midnight). The zone's offsets a day before and a day
 * after are the candidates: the wall time is read in each that shows it. Neither does: the time
 * was skipped by a DST change and moves forward by the gap (01:30 in London on a spring-forward
 * night is 02:30 BST); both do: it is ambiguous (fall back) and the first of its two instants is
 * taken, in every zone. (Guessing from the offset at the wall time read as UTC got the times just
 * after a spring-forward an hour late in zones behind UTC: 03:00 in New York was 04:00 EDT.)
 */
export function zonedTime(year: number, month: number, day: number, minutes: number, timezone: string): number {
  const asUtc = Date.UTC(year, month - 1, day, 0, minutes);
  const before = offsetAt(asUtc - DAY_MS, timezone);
  const after = offsetAt(asUtc + DAY_MS, timezone);
  const shows = (offset: number) => offsetAt(asUtc - offset, timezone) === offset;
  const instants = [before, after].filter(shows).map((offset) => asUtc - offset);
  return instants.length ? Math.min(...instants) : asUtc - before;
}

/** The calendar date `days` after the given one. */
export function addDays(year: number, month: number, day: number, days: number): { year: number; month: number; day: number } {
  const d = new Date(Date.UTC(year, month - 1, day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}
