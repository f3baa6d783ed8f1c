import {
  DEFAULT_TICKET_NUMBER_FORMAT, NumberFormatError, assertNumberFormat, combinations, parseNumberFormat, renderTicketNumber,
} from '../../src/ticket/numberFormat';

/** A random source that returns the given values in turn (each below the asked maximum). */
const sequence = (...values: number[]) => {
  let i = 0;
  return (max: number) => {
    const v = values[i++ % values.length];
    expect(v).toBeLessThan(max);
    return v;
  };
};

// Tuesday 5 March 2024, 14:07:09 UTC (15:07:09 in Paris, 09:07:09 in New York).
const DATE = new Date(Date.UTC(2024, 2, 5, 14, 7, 9));

const problem = (format: string) => {
  try {
    assertNumberFormat(format);
  } catch (err) {
    expect(err).toBeInstanceOf(NumberFormatError);
    return (err as Error).message;
  }
  throw new Error(`${format} was accepted`);
};

describe('renderTicketNumber', () => {
  it('renders the default %N{7} as seven random digits', () => {
    expect(DEFAULT_TICKET_NUMBER_FORMAT).toBe('%N{7}');
    expect(renderTicketNumber('%N{7}', { sequence: 1, date: DATE, random: sequence(4, 7, 8, 3, 7, 8, 3) })).toBe('4783783');
    expect(renderTicketNumber('%N{7}', { sequence: 1, date: DATE })).toMatch(/^\d{7}$/);
  });

  it('keeps leading zeros (numbers are strings)', () => {
    expect(renderTicketNumber('%N{7}', { sequence: 1, date: DATE, random: sequence(0, 0, 7, 2, 9, 9, 7) })).toBe('0072997');
  });

  it.each([
    ['%L{3}-%N{4}', 'ABC-1234', [0, 1, 2, 1, 2, 3, 4]],
    ['SALES-%N{5}', 'SALES-63959', [6, 3, 9, 5, 9]],
    ['%L%N', 'Z9', [25, 9]],
  ])('%s → %s', (format, expected, values) => {
    expect(renderTicketNumber(format, { sequence: 1, date: DATE, random: sequence(...values) })).toBe(expected);
  });

  it('puts the sequence value in %S, unpadded', () => {
    expect(renderTicketNumber('%Y-%S', { sequence: 1, date: DATE })).toBe('2024-1');
    expect(renderTicketNumber('ACME-%y-%S', { sequence: 4821, date: DATE })).toBe('ACME-24-4821');
  });

  it('renders every date token (UTC by default, or the given zone)', () => {
    const all = '%Y.%y.%m.%d.%j.%g.%G.%h.%H.%i.%s';
    expect(renderTicketNumber(all, { sequence: 1, date: DATE })).toBe('2024.24.03.05.5.2.14.02.14.07.09');
    expect(renderTicketNumber(all, { sequence: 1, date: DATE, timezone: 'America/New_York' })).toBe('2024.24.03.05.5.9.9.09.09.07.09');
    // Midnight is hour 0 (24-hour) and 12 (12-hour); the date is the zone's.
    const midnight = new Date(Date.UTC(2024, 11, 31, 23, 30, 0));
    expect(renderTicketNumber('%Y%m%d-%H%g%h', { sequence: 1, date: midnight, timezone: 'Europe/Paris' })).toBe('20250101-001212');
  });

  it('uses crypto randomness by default: letters are upper case A-Z', () => {
    for (let i = 0; i < 20; i++) expect(renderTicketNumber('%L{10}', { sequence: 1, date: DATE })).toMatch(/^[A-Z]{10}$/);
  });
});

describe('assertNumberFormat', () => {
  it.each(['%N{7}', '%N{5}', 'SALES-%N{5}', '%L{3}-%N{4}', '%Y-%S', 'ACME-%y-%S', '%S', '%L{4}', 'a.b_c+d!e*f,g-%S'])('accepts %s', (format) => {
    expect(assertNumberFormat(format).length).toBeGreaterThan(0);
  });

  it.each([
    ['%N{4}', /must contain %S .* or at least 5 random digits or letters/],
    ['%Y%m%d%H%i%s', /must contain %S/],
    ['TICKET', /must contain %S/],
    ['%L{3}', /must contain %S/],
    ['%N{0}', /may repeat %N 1 to 20 times/],
    ['%N{21}', /may repeat %N 1 to 20 times/],
    ['%L{x}', /may repeat %L 1 to 20 times/],
    ['%X%S', /unknown token %X/],
    ['%S%', /ends with a % that starts no token/],
    ['{number}', /may not contain "\{"/],
    ['a b %S', /may not contain " "/],
    ['%N{20}%N{20}%N{20}%N{5}', /longer than 64 characters/],
  ])('refuses %s', (format, message) => {
    expect(problem(format)).toMatch(message);
  });

  it('counts the numbers a random part can give', () => {
    expect(combinations(parseNumberFormat('%N{5}'))).toBe(100_000);
    expect(combinations(parseNumberFormat('%L{2}%N'))).toBe(6760);
    expect(combinations(parseNumberFormat('X%S'))).toBe(Infinity);
  });
});
