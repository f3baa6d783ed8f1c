import { randomBytes, randomInt } from 'node:crypto';
import { QueryTypes, UniqueConstraintError, type Transaction } from 'sequelize';
import { sequelize } from '../../db/sequelize';
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

/**
 * Inserts a ticket (`insert`, given its number) numbered in the same statement when the format
 * has no %S: the random number is drawn before the insert, and a collision with the unique key
 * fails only that insert (the transaction goes on), so the number is drawn again as
 * assignTicketNumber does. A %S format needs the id: inserted with a placeholder, then numbered.
 * Returns the ticket carrying its final number.
 */
export async function insertNumbered(
  tokens: FormatToken[], date: Date, timezone: string, insert: (number: string) => Promise<Ticket>, transaction: Transaction,
  random: RandomSource = randomInt,
): Promise<Ticket> {
  if (tokens.some((t) => t.kind === 'sequence')) {
    const row = await insert(placeholderNumber());
    row.setDataValue('number', await assignTicketNumber(row.id, tokens, date, timezone, transaction, random));
    return row;
  }
  const render = () => renderTicketNumber(tokens, { sequence: 0, date, timezone: zoneOf(timezone), random });
  for (const number of candidates(render, random, RANDOM_ATTEMPTS)) {
    try {
      return await insert(number);
    } catch (err) {
      if (!(err instanceof UniqueConstraintError) || !isNumberCollision(err)) throw err;
    }
  }
  throw new Error('No free ticket number could be found for a new ticket');
}

/** A refusal by the number's unique key (not another one). */
const isNumberCollision = (err: UniqueConstraintError) =>
  /tickets_number_unique/.test(String((err.parent as { sqlMessage?: string } | undefined)?.sqlMessage ?? err.message))
  || Object.keys(err.fields ?? {}).some((f) => /number/.test(f));
