import { Op, col, fn, type Transaction } from 'sequelize';
import { config } from '../config';
import { now } from '../db/entity';
import { Brand, DepartmentEmail, IncomingMail, MailMessageId } from '../db/models';
import type { IncomingDecision } from '../db/models/IncomingMail';
import { onceInTransaction } from '../db/transaction';
import { systemEmail } from '../mail/compose';
import { splitSubaddress } from '../ticket/mail/replyAddress';
import { primeUsersByEmail } from '../ticket/tickets/people';
import type { IncomingMessage } from './parse';

/**
 * The reads the ingestion makes for every mail, each answered from a map kept per transaction: a
 * batch of mails (./ingest.ts, ingestBatch) asks for all of its keys in one statement per kind
 * first (`primeBatch`), and a key not asked for yet is read when it comes up. Keys the
 * transaction writes (import keys) are entered as they are written (`noteImported`).
 */
type Known<V> = Map<string, V | null>;

async function lookUp<V>(t: Transaction, kind: string, keys: string[], read: (missing: string[]) => Promise<Array<[string, V]>>): Promise<Known<V>> {
  const known = await onceInTransaction(t, `mailbox.lookup:${kind}`, async () => new Map<string, V | null>());
  const missing = [...new Set(keys)].filter((k) => !known.has(k));
  if (missing.length) {
    const found = await read(missing);
    for (const k of missing) known.set(k, null);
    for (const [k, v] of found) known.set(k, v);
  }
  return known;
}

/** The department addresses among `addresses` (sub-addresses read as their base address), in their order. */
export async function ownAddresses(addresses: string[], t: Transaction): Promise<DepartmentEmail[]> {
  const bases = [...new Set(addresses.map((a) => splitSubaddress(a).base))];
  if (!bases.length) return [];
  const known = await lookUp(t, 'own', bases, async (missing) => (await DepartmentEmail.findAll({ where: { address: { [Op.in]: missing } }, transaction: t }))
    .map((r) => [r.address.toLowerCase(), r]));
  return bases.map((b) => known.get(b)).filter((r): r is DepartmentEmail => !!r);
}

/**
 * The addresses an `X-Loop` header names (`desk@x`, `<desk@x>`, `Desk <desk@x>`, several in one
 * header or in several headers), lower case.
 */
export const xLoopAddresses = (m: IncomingMessage): string[] => (m.headers.get('x-loop') ?? [])
  .flatMap((v) => v.split(','))
  .map((v) => (/<([^<>]*)>/.exec(v)?.[1] ?? v).trim().toLowerCase())
  .filter((a) => a.includes('@'));

/**
 * Our loop markers among `addresses` (an incoming mail's X-Loop): a department address, or the
 * default address of a brand or the core `default_email` (what the mails of a ticket without a
 * department address, and the verification mails, go out from and are marked with: fromAddress).
 */
export async function ownLoopMarkers(addresses: string[], t: Transaction): Promise<string[]> {
  const departments = (await ownAddresses(addresses, t)).map((e) => e.address.toLowerCase());
  return [...departments, ...(await brandAddresses(addresses, t)).filter((a) => !departments.includes(a))];
}

/** The default addresses of brands, and the core one, among `addresses` (sub-addresses read as their base address), lower case. */
async function brandAddresses(addresses: string[], t: Transaction): Promise<string[]> {
  const bases = [...new Set(addresses.map((a) => splitSubaddress(a).base))];
  if (!bases.length) return [];
  const known = await lookUp(t, 'brandAddress', bases, async (missing) => {
    const [brands, system] = await Promise.all([
      Brand.findAll({ attributes: ['id', 'default_email'], where: { default_email: { [Op.in]: missing } }, transaction: t }),
      systemEmail(t),
    ]);
    return [...brands.map((b) => b.default_email!.toLowerCase()), ...(system && missing.includes(system) ? [system] : [])].map((a): [string, true] => [a, true]);
  });
  return bases.filter((b) => known.get(b));
}

/** Whether the help desk sent a mail with this Message-ID. */
export async function sentByUs(messageId: string, t: Transaction): Promise<boolean> {
  return !!(await sentIds([messageId], t)).get(messageId);
}

const sentIds = (ids: string[], t: Transaction) => lookUp(t, 'sent', ids, async (missing) => (await MailMessageId.findAll({
  attributes: ['message_id'], where: { message_id: { [Op.in]: missing }, direction: 'out' }, transaction: t,
})).map((r): [string, true] => [r.message_id, true]));

/** The ledger line that holds this import key (the mail imported, or refused for good: keepsImportKey), if any. */
export async function importedAs(key: string, t: Transaction): Promise<IncomingMail | null> {
  return (await importedKeys([key], t)).get(key) ?? null;
}

const importedKeys = (keys: string[], t: Transaction) => lookUp(t, 'imported', keys, async (missing) => (await IncomingMail.findAll({
  where: { import_key: { [Op.in]: missing } }, transaction: t,
})).map((r): [string, IncomingMail] => [r.import_key!, r]));

/** A mail decided in `t` under `key` (its ledger line `id`, keepsImportKey): later mails of the batch with that key are its duplicates. */
export async function noteImported(
  key: string, line: { id: number; decision: IncomingDecision; ticketId: number | null; messageId: number | null }, t: Transaction,
): Promise<void> {
  (await importedKeys([], t)).set(key, IncomingMail.build({
    id: line.id, import_key: key, decision: line.decision, ticket_id: line.ticketId, ticket_message_id: line.messageId,
  }));
}

/**
 * How many tickets each sender opened by mail since `since` (the ledger's `new_ticket` lines; one
 * range of `incoming_mails_sender` per sender), for the new-ticket flood limit (./flood.ts).
 * Read for a whole batch at once (primeBatch); the transaction's own openings are tallied there.
 */
export async function ticketsOpenedBy(senders: string[], since: number, t: Transaction): Promise<Known<number>> {
  return lookUp(t, 'openedBy', senders, async (missing) => (await IncomingMail.findAll({
    attributes: ['from_address', [fn('COUNT', col('id')), 'n']], group: ['from_address'], raw: true,
    where: { from_address: { [Op.in]: missing }, created_at: { [Op.gte]: since }, decision: 'new_ticket' }, transaction: t,
  }) as unknown as Array<{ from_address: string; n: number }>).map((r): [string, number] => [r.from_address.toLowerCase(), Number(r.n)]));
}

/** The address a mail counts under for flood limits: its From as written (not a Reply-To put first), as the ledger keeps it. */
export const senderOf = (mail: IncomingMessage): string => (mail.headerFrom ?? mail.from!).address.toLowerCase();

/** Reads, in one statement per kind, what the mails of a batch will ask for (their senders: as users of `brandId`, when there is one). */
export async function primeBatch(mails: IncomingMessage[], brandId: number | null, t: Transaction): Promise<void> {
  const withFrom = mails.filter((m) => m.from);
  // Sent together: the driver pipelines them on the transaction's connection.
  await Promise.all([
    brandId === null ? undefined : primeUsersByEmail(withFrom.map((m) => m.from!.address), brandId, t),
    ownAddresses(withFrom.flatMap((m) => [m.from!.address, ...m.to, ...m.cc, ...m.deliveredTo, ...xLoopAddresses(m)]), t),
    // The X-Loop markers' brands (none read when no mail of the batch carries one).
    brandAddresses(withFrom.flatMap(xLoopAddresses), t),
    sentIds(withFrom.map((m) => m.messageId).filter((id): id is string => !!id), t),
    importedKeys(withFrom.map((m) => m.key), t),
    config().mailbox.floodNewTickets ? ticketsOpenedBy(withFrom.map(senderOf), now() - config().mailbox.floodWindowSeconds, t) : undefined,
  ]);
}
