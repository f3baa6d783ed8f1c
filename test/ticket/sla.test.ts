import { dueTime, formatClockTime, parseClockTime, type SlaClock } from '../../src/ticket/sla';

/** UNIX seconds of a UTC wall time. */
const utc = (y: number, mo: number, d: number, h = 0, mi = 0) => Date.UTC(y, mo - 1, d, h, mi) / 1000;
const iso = (sec: number | null) => (sec === null ? null : new Date(sec * 1000).toISOString().replace('.000', ''));

const weekdays = (start: string, end: string, days = [1, 2, 3, 4, 5]) =>
  days.map((day) => ({ day, start: parseClockTime(start)!, end: parseClockTime(end)! }));

const OFFICE: SlaClock = { businessHours: true, schedule: weekdays('09:00', '17:00'), timezone: 'UTC' };
const ALWAYS: SlaClock = { businessHours: false, schedule: [], timezone: 'UTC' };

// 2024-03-04 is a Monday; 2024-03-08 a Friday.
describe('dueTime, 24/7', () => {
  it('adds the minutes on the calendar clock, nights and weekends included', () => {
    expect(iso(dueTime(utc(2024, 3, 8, 16), 120, ALWAYS))).toBe('2024-03-08T18:00:00Z');
    expect(iso(dueTime(utc(2024, 3, 8, 23, 30), 60 * 24 * 2, ALWAYS))).toBe('2024-03-10T23:30:00Z');
    expect(dueTime(utc(2024, 3, 8), 0, ALWAYS)).toBe(utc(2024, 3, 8));
  });

  it('ignores a schedule', () => {
    expect(dueTime(utc(2024, 3, 9, 3), 30, { ...OFFICE, businessHours: false })).toBe(utc(2024, 3, 9, 3, 30));
  });
});

describe('dueTime, business hours', () => {
  it('counts inside one working day', () => {
    expect(iso(dueTime(utc(2024, 3, 4, 10), 90, OFFICE))).toBe('2024-03-04T11:30:00Z');
    expect(iso(dueTime(utc(2024, 3, 4, 9), 480, OFFICE))).toBe('2024-03-04T17:00:00Z');
  });

  it('carries over the night', () => {
    expect(iso(dueTime(utc(2024, 3, 4, 16), 120, OFFICE))).toBe('2024-03-05T10:00:00Z');
    expect(iso(dueTime(utc(2024, 3, 4, 9), 481, OFFICE))).toBe('2024-03-05T09:01:00Z');
  });

  it('carries over the weekend', () => {
    expect(iso(dueTime(utc(2024, 3, 8, 16), 120, OFFICE))).toBe('2024-03-11T10:00:00Z');
    // Three full working days from Thursday morning: Thursday, Friday, Monday.
    expect(iso(dueTime(utc(2024, 3, 7, 9), 3 * 480, OFFICE))).toBe('2024-03-11T17:00:00Z');
  });

  it('starts the clock at the next opening when started outside business hours', () => {
    expect(iso(dueTime(utc(2024, 3, 4, 6), 60, OFFICE))).toBe('2024-03-04T10:00:00Z'); // before opening
    expect(iso(dueTime(utc(2024, 3, 4, 20), 60, OFFICE))).toBe('2024-03-05T10:00:00Z'); // after closing
    expect(iso(dueTime(utc(2024, 3, 9, 12), 60, OFFICE))).toBe('2024-03-11T10:00:00Z'); // Saturday
    expect(iso(dueTime(utc(2024, 3, 8, 17), 1, OFFICE))).toBe('2024-03-11T09:01:00Z'); // at closing time
  });

  it('keeps the seconds of the start', () => {
    expect(dueTime(utc(2024, 3, 4, 10) + 17, 1, OFFICE)).toBe(utc(2024, 3, 4, 10, 1) + 17);
  });

  it('follows each day its own window, up to 24:00', () => {
    const clock: SlaClock = {
      businessHours: true, timezone: 'UTC',
      schedule: [...weekdays('09:00', '17:00', [1, 2, 3, 4]), { day: 5, start: 540, end: 720 }, { day: 6, start: 1320, end: 1440 }],
    };
    // Friday closes at 12:00; Saturday works 22:00-24:00.
    expect(iso(dueTime(utc(2024, 3, 8, 11), 120, clock))).toBe('2024-03-09T23:00:00Z');
    expect(iso(dueTime(utc(2024, 3, 9, 23, 30), 60, clock))).toBe('2024-03-11T09:30:00Z');
  });

  it('uses the schedule in the plan time zone, across a DST change', () => {
    const london: SlaClock = { ...OFFICE, timezone: 'Europe/London' };
    // Winter: London is UTC.
    expect(iso(dueTime(utc(2024, 3, 1, 16), 120, london))).toBe('2024-03-04T10:00:00Z');
    // Clocks go forward on Sunday 31 March: on Friday 16:00 GMT, due Monday 10:00 BST = 09:00 UTC.
    expect(iso(dueTime(utc(2024, 3, 29, 16), 120, london))).toBe('2024-04-01T09:00:00Z');
    const tokyo: SlaClock = { ...OFFICE, timezone: 'Asia/Tokyo' };
    // Monday 23:00 UTC is Tuesday 08:00 in Tokyo: the clock starts at 09:00 JST (00:00 UTC).
    expect(iso(dueTime(utc(2024, 3, 4, 23), 30, tokyo))).toBe('2024-03-05T00:30:00Z');
  });

  it('opens a window right after a spring-forward at its own hour, in zones behind UTC too', () => {
    // Sunday 2026-03-08: New York goes from EST to EDT at 02:00. A 06:00-14:00 window opens at
    // 06:00 EDT (10:00 UTC), not an hour later; so does Los Angeles' 09:00 (16:00 UTC).
    const sundays = (start: string, end: string, timezone: string): SlaClock => ({ businessHours: true, schedule: weekdays(start, end, [0]), timezone });
    expect(iso(dueTime(utc(2026, 3, 8, 5), 60, sundays('06:00', '14:00', 'America/New_York')))).toBe('2026-03-08T11:00:00Z');
    expect(iso(dueTime(utc(2026, 3, 8, 8), 60, sundays('09:00', '17:00', 'America/Los_Angeles')))).toBe('2026-03-08T17:00:00Z');
    // A window opening in the gap (02:30, which that night has not) opens at 03:30 EDT; an
    // ambiguous opening (01:00 on the fall-back night, twice) at the first of the two, in London as in New York.
    expect(iso(dueTime(utc(2026, 3, 8, 5), 30, sundays('02:30', '12:00', 'America/New_York')))).toBe('2026-03-08T08:00:00Z');
    expect(iso(dueTime(utc(2026, 10, 24, 23), 30, sundays('01:00', '12:00', 'Europe/London')))).toBe('2026-10-25T00:30:00Z');
    expect(iso(dueTime(utc(2026, 11, 1, 4), 30, sundays('01:00', '12:00', 'America/New_York')))).toBe('2026-11-01T05:30:00Z');
  });

  it('is null when no working window exists (nothing ever falls due)', () => {
    expect(dueTime(utc(2024, 3, 4), 60, { ...OFFICE, schedule: [] })).toBeNull();
  });

  it('is null past ten years of business hours (a plan stored before its targets were checked against them)', () => {
    const minuteAWeek: SlaClock = { ...OFFICE, schedule: weekdays('09:00', '09:01', [1]) };
    expect(dueTime(utc(2024, 3, 4), 525600, minuteAWeek)).toBeNull();
    expect(iso(dueTime(utc(2024, 3, 4), 500, minuteAWeek))).toBe('2033-09-26T09:01:00Z');
  });

  it('counts whole weeks at once where no window holds a DST change, to the same instant as walking every day', () => {
    // A seeded generator: the same cases on every run.
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)];
    for (let i = 0; i < 60; i++) {
      const from = 240 + Math.floor(random() * 600);
      const schedule = [0, 1, 2, 3, 4, 5, 6].filter(() => random() < 0.6).map((day) => ({ day, start: from, end: from + 15 + Math.floor(random() * (1380 - from - 15)) }));
      if (!schedule.length) continue;
      const clock: SlaClock = { businessHours: true, schedule, timezone: pick(['UTC', 'Europe/London', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata', 'America/Santiago']) };
      const start = utc(2020, 1, 1) + Math.floor(random() * 10 * 365 * 86400);
      const minutes = 1 + Math.floor(random() * 200000);
      const c = { start, minutes, clock };
      expect({ ...c, due: dueTime(start, minutes, clock) }).toEqual({ ...c, due: dueTime(start, minutes, clock, { skipWeeks: false }) });
    }
    // A year's target in a 40-hour week (219 weeks), and one of a 24-hour window (walked: it may hold a DST change).
    expect(iso(dueTime(utc(2024, 3, 4, 9), 525600, OFFICE))).toBe(iso(dueTime(utc(2024, 3, 4, 9), 525600, OFFICE, { skipWeeks: false })));
    const allDay: SlaClock = { businessHours: true, schedule: weekdays('00:00', '24:00'), timezone: 'Europe/London' };
    expect(iso(dueTime(utc(2024, 3, 4, 9), 525600, allDay))).toBe(iso(dueTime(utc(2024, 3, 4, 9), 525600, allDay, { skipWeeks: false })));
  });

  it('reaches far targets', () => {
    // 100 working days of 8 hours from Monday 09:00 = 20 weeks later, Friday 17:00.
    expect(iso(dueTime(utc(2024, 3, 4, 9), 100 * 480, OFFICE))).toBe('2024-07-19T17:00:00Z');
  });
});

describe('clock times', () => {
  it.each([['09:00', 540], ['00:00', 0], ['23:59', 1439], ['24:00', 1440]])('%s is %i minutes', (text, minutes) => {
    expect(parseClockTime(text)).toBe(minutes);
    expect(formatClockTime(minutes)).toBe(text);
  });

  it.each(['9:00', '24:01', '25:00', '12:60', 'noon', ''])('%j is not a time', (text) => {
    expect(parseClockTime(text)).toBeNull();
  });
});
