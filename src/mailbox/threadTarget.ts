import { Op, literal, type Transaction } from 'sequelize';
import { Ticket, User } from '../db/models';
import { jsonList } from '../ticket/common';
import { answeredMail, ticketOfReferences, type AnsweredMail } from '../ticket/mail/threading';
import type { MailAudience } from '../db/models/MailMessageId';
import { ticketOfReplyAddress } from '../ticket/mail/replyAddress';
import type { IncomingMessage } from './parse';
import { isForwardSubject, ticketNumberInSubject } from './subject';

/**
 * Rule 6 of the ingestion: the ticket a mail answers, and how it was found.
 *
 * - In-Reply-To/References naming a Message-ID stored for a ticket (ours, or a mail imported into
 *   it), References alone included (clients that drop In-Reply-To). The ids are random, so who
 *   holds one received the thread: a reply by someone not yet on the ticket (copied on the
 *   original mail, or answering with "reply all") joins it as a CC (`joinsAsCc`).
 *   A *forward* (`Fwd:`, `WG:`, `TR:`, `Fw:` …) that still carries those headers (Gmail keeps them)
 *   only joins when its sender is already on the ticket: a forward to a third party is how a
 *   stranger gets hold of the ids. Someone not on the ticket answering one of OUR forwards (the
 *   mail it answers directly is a forward or an answer to one), or an operator's own mail (a
 *   notification passed on to them), answers the operators: a note (`forwardReply`). An operator answering a mail about a note writes a note
 *   (`answersNote`).
 * - The ticket's sub-address among the recipients (`support+t12-…@`), checked by a hash.
 * - A ticket mail forwarded as an attachment (message/rfc822): the ids of the mail inside, from the
 *   ticket's user, an address copied on it, or an operator.
 * - The `[#number]` in the subject (reply/forward prefixes stripped), accepted only from the
 *   ticket's user, an address copied on it, or an operator: a number is easy to guess (and a From
 *   easy to fake: an operator's mail found by anything but the headers of their own mail is a note).
 *
 * A merged ticket leads to its target; a trashed one is left alone (the mail opens a new ticket).
 */
export interface ThreadTarget {
  ticket: Ticket;
  how: string;
  /** The sender is not on the ticket yet and joins it as a CC (found by the thread's own ids). */
  joinsAsCc: boolean;
  /**
   * The sender is not on the ticket and answers, by its headers, a mail of the operators' side:
   * one of our forwards (a vendor, a colleague the operator asked), or an operator's own mail (a
   * notification their mailbox passed on to a team address): the answer is for the operators
   * only, a note; the sender joins nothing.
   */
  forwardReply: boolean;
  /** The audience of the mail it answers by its headers (answeredMail), when stored. */
  answeredAudience: MailAudience | null;
  /**
   * The sender is an operator answering, by its headers, a mail about a note (their notification
   * of a colleague's note, or of an answer to a forward): the answer is a note too. A Reply to a
   * notification goes to the department address alone; internal talk must not reach the customer.
   */
  answersNote: boolean;
  /**
   * The sender as an operator (then the message is theirs: a reply only when `answeredAudience` is
   * their own conversation, else a note, ./ingest.ts), or null.
   */
  operator: User | null;
  /** The ticket's user (id and address), or null. */
  owner: User | null;
}

/**
 * Who the sender is (the people holding the address, as their main or an additional one) and who
 * owns a ticket (with all their addresses), each read once however many candidate tickets are
 * looked at.
 */
interface People {
  sender(): Promise<User[]>;
  owner(ticket: Ticket): Promise<User | null>;
  /** Whether the address is one of the ticket owner's, main or additional. */
  isOwner(ticket: Ticket): Promise<boolean>;
}

function people(address: string, t: Transaction): People {
  let sender: Promise<User[]> | undefined;
  const owners = new Map<number, Promise<User | null>>();
  const who: People = {
    // One statement: the people of person_emails (main and additional addresses) holding it.
    sender: () => (sender ??= User.findAll({
      attributes: ['id', 'type', 'organisation_id', 'brand_id'], order: [['id', 'ASC']], transaction: t,
      where: { id: { [Op.in]: literal('(SELECT user_id FROM person_emails WHERE email = :address)') } }, replacements: { address },
    })),
    owner: (ticket) => {
      let owner = owners.get(ticket.user_id);
      if (!owner) owners.set(ticket.user_id, (owner = User.findByPk(ticket.user_id, { attributes: ['id', 'email', 'organisation_id'], transaction: t })));
      return owner;
    },
    isOwner: async (ticket) => (await who.owner(ticket))?.email.toLowerCase() === address || (await who.sender()).some((u) => u.id === ticket.user_id),
  };
  return who;
}

export async function threadTarget(mail: IncomingMessage, t: Transaction): Promise<ThreadTarget | null> {
  const from = mail.from!.address;
  const follow = async (id: number | null | undefined) => {
    let ticket = id ? await Ticket.findByPk(id, { transaction: t }) : null;
    for (let hops = 0; ticket?.merged_into_id && hops < 5; hops++) ticket = await Ticket.findByPk(ticket.merged_into_id, { transaction: t });
    return ticket && !ticket.deleted_at ? ticket : null;
  };
  const forward = isForwardSubject(mail.subject);
  const who = people(from, t);
  const operatorOf = async () => (await who.sender()).find((u) => u.type === 'operator') ?? null;
  const found = async (ticket: Ticket, how: string, joinsAsCc: boolean, o: { forwardReply?: boolean; answersNote?: boolean; answered?: AnsweredMail | null } = {}): Promise<ThreadTarget> => ({
    ticket, how, joinsAsCc, forwardReply: o.forwardReply === true, answersNote: o.answersNote === true, answeredAudience: o.answered?.audience ?? null,
    operator: await operatorOf(), owner: await who.owner(ticket),
  });

  // The mail it answers tells its ticket, an answer to the operators' side (from someone not on
  // the ticket: a forward's, or an operator's own mail's) and an operator's answer to a note.
  const direct = await answeredMail([...mail.references, ...mail.inReplyTo], t);
  const byHeaders = await follow(direct?.ticketId);
  if (byHeaders) {
    const onTicket = await isOnTicket(from, byHeaders, who);
    const operator = await operatorOf();
    if (!onTicket && direct?.audience === 'forward') return found(byHeaders, 'In-Reply-To/References of a forward', false, { forwardReply: true, answered: direct });
    if (!onTicket && direct?.audience?.startsWith('operator:')) return found(byHeaders, 'In-Reply-To/References of an operator\'s mail', false, { forwardReply: true, answered: direct });
    if (onTicket || !forward) return found(byHeaders, 'In-Reply-To/References', !onTicket, { answersNote: !!operator && !!direct?.note, answered: direct });
  }
  for (const address of [...mail.to, ...mail.cc, ...mail.deliveredTo]) {
    const bySubaddress = await follow(await ticketOfReplyAddress(address, t));
    if (bySubaddress) {
      const onTicket = await isOnTicket(from, bySubaddress, who);
      if (onTicket || !forward) return found(bySubaddress, `the sub-address ${address}`, !onTicket);
    }
  }
  const byAttached = await follow(await ticketOfReferences(mail.forwardedIds, t));
  if (byAttached && (await isOnTicket(from, byAttached, who, false))) return found(byAttached, 'the ticket mail forwarded as an attachment', false);

  const number = ticketNumberInSubject(mail.subject);
  if (number) {
    const byNumber = await follow((await Ticket.findOne({ attributes: ['id'], where: { number }, transaction: t }))?.id);
    if (byNumber && (await isOnTicket(from, byNumber, who, false))) return found(byNumber, `the number #${number} in the subject`, false);
  }
  return null;
}

/** The ticket's user (by any of their addresses), an address copied on it, an operator, or (`organisation`) a user of the owner's organisation. */
async function isOnTicket(address: string, ticket: Ticket, who: People, organisation = true): Promise<boolean> {
  if (jsonList(ticket.cc).includes(address)) return true;
  if (await who.isOwner(ticket)) return true;
  const owner = await who.owner(ticket);
  return (await who.sender()).some((u) => u.type === 'operator' || (organisation && !!owner?.organisation_id && u.organisation_id === owner.organisation_id && u.brand_id === ticket.brand_id));
}
