import { randomBytes, randomInt } from 'node:crypto';
import { QueryTypes, UniqueConstraintError, type Transaction } from 'sequelize';
import { sequelize } from '../../db/sequelize';
import { select } from '../../db/select';
import type { Ticket } from '../../db/models';
import {
  DEFAULT_TICKET_NUMBER_FORMAT, MAX_NUMBER_LENGTH, NumberFormatError, assertNumberFormat, renderTicketNumber, type FormatToken,
  type RandomSource,
} from '../numberFormat';
import { isTimeZone } from '../../lib/timezones';

/**
 * Ticket numbers. A ticket is inserted with a placeholder number (`~` and random hex: `~` is in no
 * format, so a placeholder never equals a real number), then given its number in the same
 * transaction, which no other transaction sees before the commit:
 * - a format with %S renders the ticket's id (SupportPal's sequence is the ticket id): unique by
 *   construction, no lock, no counter row that every create would queue on;
 * - a random format is rendered and written; a collision with the unique key (`tickets_number_unique`)
 *   only fails that statement, and the number is drawn again. After RANDOM_ATTEMPTS collisions the
 *   number is widened with two more random digits per attempt (a format nearly used up keeps working).
 */

const RANDOM_ATTEMPTS = 5;
const WIDENED_ATTEMPTS = 5;

/** A number no format can produce, unique while the ticket waits for its real one. */
export const placeholderNumber = (): string => `~${randomBytes(16).toString('hex')}`;

/** The tokens of the format that applies: the department's, else the global setting, else the default. */
export function effectiveFormat(departmentFormat: string | null | undefined, globalFormat: string | null | undefined): FormatToken[] {
  for (const format of [departmentFormat, globalFormat]) {
    if (!format?.trim()) continue;
    try {
      return assertNumberFormat(format.trim());
    } catch (err) {
      // A stored format that no longer passes the checks (written before them) is skipped.
      if (!(err instanceof NumberFormatError)) throw err;
    }
  }
  return assertNumberFormat(DEFAULT_TICKET_NUMBER_FORMAT);
}

async function write(ticketId: number, number: string, transaction: Transaction): Promise<boolean> {
  try {
    await sequelize().query('UPDATE tickets SET number = :number WHERE id = :id', {
      replacements: { number, id: ticketId }, transaction, type: QueryTypes.UPDATE,
    });
    return true;
  } catch (err) {
    if (err instanceof UniqueConstraintError) return false;
    throw err;
  }
}

/** The numbers to try, in order: the format's own, then widened by two more random digits per attempt. */
function* candidates(render: () => string, random: RandomSource, own: number): Generator<string> {
  for (let attempt = 0; attempt < own; attempt++) yield render();
  for (let extra = 1; extra <= WIDENED_ATTEMPTS; extra++) {
    let number = render();
    for (let k = 0; k < extra * 2; k++) number += String(random(10));
    if (number.length <= MAX_NUMBER_LENGTH) yield number;
  }
}

const zoneOf = (timezone: string) => (isTimeZone(timezone) ? timezone : 'UTC');

/**
 * Gives the ticket (inserted with a placeholder) its number; returns it. `date` is the ticket's
 * creation time (date tokens), in `timezone`; `random` draws the random digits and letters.
 */
export async function assignTicketNumber(
  ticketId: number, tokens: FormatToken[], date: Date, timezone: string, transaction: Transaction, random: RandomSource = randomInt,
): Promise<string> {
  const render = () => renderTicketNumber(tokens, { sequence: ticketId, date, timezone: zoneOf(timezone), random });
  // A sequential number is unique unless a random number of another format took it: then widened like a random one.
  const own = tokens.some((t) => t.kind === 'sequence') ? 1 : RANDOM_ATTEMPTS;
  for (const number of candidates(render, random, own)) {
    if (await write(ticketId, number, transaction)) return number;
  }
  throw new Error(`No free ticket number could be found for ticket ${ticketId}`);
}

/** A ticket to number: its format and its creation time (date tokens). */
export interface Numbering {
  tokens: FormatToken[];
  date: Date;
}

const isSequential = (tokens: FormatToken[]) => tokens.some((t) => t.kind === 'sequence');

/**
 * Inserts tickets (`insert`, given their numbers in order: one statement) numbered in the same
 * statement when their format has no %S: each random number is drawn before the insert, and a
 * collision with the unique key fails only that insert (the transaction goes on), so the number it
 * names is drawn again as assignTicketNumber does. Several random numbers are first made distinct
 * and checked against those taken (one SELECT), since a failed insert costs every row of it. A %S
 * format needs the id: inserted with a placeholder, then numbered; all of them in one UPDATE (when
 * a number of another format is in the way, one by one with assignTicketNumber). Returns the
 * tickets carrying their final numbers, in order. `timezone`: of the date tokens.
 */
export async function insertNumbered(
  items: Numbering[], timezone: string, insert: (numbers: string[]) => Promise<Ticket[]>, transaction: Transaction,
  random: RandomSource = randomInt,
): Promise<Ticket[]> {
  const zone = zoneOf(timezone);
  const drawn = items.map(({ tokens, date }) => (isSequential(tokens) ? null
    : candidates(() => renderTicketNumber(tokens, { sequence: 0, date, timezone: zone, random }), random, RANDOM_ATTEMPTS)));
  const numbers = items.map(() => placeholderNumber());
  const drawing = items.flatMap((_, k) => (drawn[k] ? [k] : []));
  const redraw = (k: number) => {
    const next = drawn[k]!.next();
    if (next.done) throw new Error('No free ticket number could be found for a new ticket');
    numbers[k] = next.value;
  };
  drawing.forEach(redraw);
  if (drawing.length > 1) {
    for (;;) {
      const seen = new Set<string>();
      for (const k of drawing) {
        while (seen.has(numbers[k])) redraw(k);
        seen.add(numbers[k]);
      }
      const taken = await takenNumbers(drawing.map((k) => numbers[k]), transaction);
      if (!taken.size) break;
      for (const k of drawing) if (taken.has(numbers[k])) redraw(k);
    }
  }
  let rows: Ticket[];
  for (;;) {
    try {
      rows = await insert(numbers);
      break;
    } catch (err) {
      if (!(err instanceof UniqueConstraintError) || !isNumberCollision(err) || !drawing.length) throw err;
      const duplicate = duplicateEntry(err);
      const hit = drawing.filter((k) => numbers[k] === duplicate);
      (hit.length ? hit : drawing).forEach(redraw);
    }
  }
  const sequential = items.flatMap((item, k) => (drawn[k] ? [] : [k]));
  if (sequential.length) await numberByIds(sequential.map((k) => ({ ticket: rows[k], ...items[k] })), zone, transaction, random);
  return rows;
}

/** Those of `numbers` that tickets have (one SELECT). */
async function takenNumbers(numbers: string[], transaction: Transaction): Promise<Set<string>> {
  const rows = await select<{ number: string }>('SELECT number FROM tickets WHERE number IN (:numbers)', { numbers }, { transaction });
  return new Set(rows.map((r) => r.number));
}

/** Gives tickets of a %S format (inserted with placeholders) their numbers: one UPDATE; on a collision, one by one. */
async function numberByIds(tickets: Array<{ ticket: Ticket } & Numbering>, zone: string, transaction: Transaction, random: RandomSource): Promise<void> {
  const numbers = tickets.map(({ ticket, tokens, date }) => renderTicketNumber(tokens, { sequence: ticket.id, date, timezone: zone, random }));
  try {
    await sequelize().query(`UPDATE tickets SET number = CASE id ${tickets.map(() => 'WHEN ? THEN ?').join(' ')} END WHERE id IN (?)`, {
      replacements: [...tickets.flatMap(({ ticket }, i) => [ticket.id, numbers[i]]), tickets.map(({ ticket }) => ticket.id)], transaction, type: QueryTypes.UPDATE,
    });
    tickets.forEach(({ ticket }, i) => ticket.setDataValue('number', numbers[i]));
  } catch (err) {
    // The UPDATE changed nothing.
    if (!(err instanceof UniqueConstraintError)) throw err;
    for (const { ticket, tokens, date } of tickets) ticket.setDataValue('number', await assignTicketNumber(ticket.id, tokens, date, zone, transaction, random));
  }
}

/** The value a unique key refused (`Duplicate entry '…' for key …`), if the message says it. */
const duplicateEntry = (err: UniqueConstraintError) =>
  /Duplicate entry '(.*)' for key/s.exec(String((err.parent as { sqlMessage?: string } | undefined)?.sqlMessage ?? ''))?.[1];

/** A refusal by the number's unique key (not another one). */
const isNumberCollision = (err: UniqueConstraintError) =>
  /tickets_number_unique/.test(String((err.parent as { sqlMessage?: string } | undefined)?.sqlMessage ?? err.message))
  || Object.keys(err.fields ?? {}).some((f) => /number/.test(f));
