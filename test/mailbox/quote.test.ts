/** The new part of a reply (src/mailbox/quote.ts): history cut where it can be told apart, nothing a customer wrote lost. */
import { REPLY_ABOVE_MARKER } from '../../src/mail/compose';
import { stripQuoted } from '../../src/mailbox/quote';

describe('stripQuoted', () => {
  it.each([
    ['an attribution and its quote', 'Thanks, it works.\n\nOn Tue, 3 Mar 2026 at 10:00, Help Desk <desk@x.test> wrote:\n> Try this.\n> Regards', 'Thanks, it works.'],
    ['an attribution wrapped over two lines', 'Yes.\n\nOn Tue, 3 Mar 2026 at 10:00, Help Desk\n<desk@x.test> wrote:\n> Try this.', 'Yes.'],
    ['a German attribution', 'Danke.\n\nAm 03.03.2026 um 10:00 schrieb Help Desk <desk@x.test>:\n> Bitte', 'Danke.'],
    ['Outlook\'s original message', 'See below.\n\n-----Original Message-----\nFrom: Desk\nSent: Monday\nSubject: x\n\nold text', 'See below.'],
    ['Outlook\'s header block', 'Done.\n\nFrom: Help Desk <desk@x.test>\nSent: Monday, 2 March 2026 10:00\nTo: me\n\nold text', 'Done.'],
    ['our marker', `New text\n${REPLY_ABOVE_MARKER}\nold`, 'New text'],
    ['a trailing quote', 'Short answer.\n\n> the question\n>\n> more', 'Short answer.'],
    ['CRLF line ends', 'Fine.\r\n\r\nOn Mon, Bob wrote:\r\n> x', 'Fine.'],
    ['Outlook\'s HTML reply, its rule read as text', 'Works now.\n\n________________________________\nFrom: Help Desk <desk@x.test>\nSent: Monday\nTo: Ann <ann@x.test>\nSubject: RE: Printer\n\nold text', 'Works now.'],
    ['Outlook\'s header block with a Cc, in German', 'Erledigt.\n\nVon: Help Desk <desk@x.test>\nGesendet: Montag, 2. März 2026 10:00\nAn: Ann <ann@x.test>\nCc: Bob <bob@x.test>\nBetreff: AW: Drucker\n\nalter Text', 'Erledigt.'],
    ['Outlook for Mac\'s header block (Date:)', 'Done.\n\nFrom: Help Desk <desk@x.test>\nDate: Monday, 2 March 2026 at 10:00\nTo: Ann <ann@x.test>\nSubject: Re: Printer\n\nold text', 'Done.'],
    ['Outlook\'s header block in Swedish', 'Klart.\n\nFrån: Help Desk <desk@x.test>\nSkickat: den 2 mars 2026 10:00\nTill: Ann <ann@x.test>\nÄmne: SV: Skrivare\n\ngammal text', 'Klart.'],
    ['Outlook\'s header block in French (a space before the colon)', 'C\'est fait.\n\nDe : Help Desk <desk@x.test>\nEnvoyé : lundi 2 mars 2026 10:00\nÀ : Ann <ann@x.test>\nObjet : RE: Imprimante\n\nancien texte', 'C\'est fait.'],
    ['Outlook\'s header block in Portuguese (Enviada em:)', 'Feito.\n\nDe: Help Desk <desk@x.test>\nEnviada em: segunda-feira, 2 de março de 2026 10:00\nPara: Ann <ann@x.test>\nAssunto: RE: Impressora\n\ntexto antigo', 'Feito.'],
    ['a Swedish Gmail attribution', 'Tack.\n\nDen sön 29 nov. 2026 kl 21:48 skrev Help Desk <desk@x.test>:\n> Prova detta.', 'Tack.'],
    ['the rule above an attribution', 'Merci.\n\n-----\nLe lun. 2 mars 2026 à 10:00, Help Desk <desk@x.test> a écrit :\n> Essayez ceci.', 'Merci.'],
  ])('cuts %s', (_name, input, expected) => {
    expect(stripQuoted(input)).toBe(expected);
  });

  it.each([
    ['a quote in the middle, answered below', 'About this:\n> the question\nMy answer is no.'],
    ['an attribution not followed by a quote', 'On Monday, my colleague wrote:\nthat the printer is fine. It is not.'],
    ['plain text', 'Hello,\nthe printer is on fire.'],
    ['a rule in what the sender wrote', 'Steps:\n-----\n1. Open the tray.'],
    ['headers a customer pasted, and the question after them', 'Your server bounced my mail:\n\nFrom: MAILER-DAEMON@mx.cust.test\nTo: ann@cust.test\nSubject: Undelivered Mail Returned to Sender\n\nCan you fix your MX?'],
    ['raw headers pasted, with their date', 'This came back:\n\nFrom: Mail Delivery System <MAILER-DAEMON@mx.cust.test>\nDate: Mon, 2 Mar 2026 10:00:00 +0100\nTo: ann@cust.test\nSubject: Undelivered Mail\n\nCan you fix your MX?'],
    ['a From and a Sent line alone, no header block', 'Question about a parcel\n\nFrom: the warehouse\nSent: yesterday, but it never arrived.'],
  ])('keeps %s', (_name, input) => {
    expect(stripQuoted(input)).toBe(input);
  });

  it('does not cut a forward at its forwarded header block (Outlook\'s nor Gmail\'s): what follows is the mail forwarded', () => {
    const outlook = 'Please see the reminder below.\n\n________________________________\nFrom: Billing <billing@vendor.test>\nSent: Monday, 2 March 2026 10:00\nTo: Ann <ann@cust.test>\nSubject: Invoice 4711 overdue\n\nInvoice 4711 is 30 days overdue.';
    const gmail = 'FYI\n\n---------- Forwarded message ---------\nFrom: Billing <billing@vendor.test>\nDate: Mon, 2 Mar 2026 at 10:00\nSubject: Invoice\nTo: <ann@cust.test>\n\nOn Sun, 1 Mar 2026, Ann wrote:\n> Where is it?\n\nAttached.';
    for (const forward of [outlook, '-----Original Message-----\nFrom: x\nSent: y\n\nforwarded', gmail]) expect(stripQuoted(forward, { forward: true })).toBe(forward);
    expect(stripQuoted(outlook)).toBe('Please see the reminder below.');
    // Our marker is still where our own mail, forwarded back to us, begins.
    expect(stripQuoted(`See below.\n\n${REPLY_ABOVE_MARKER}\nour mail`, { forward: true })).toBe('See below.');
  });

  it('keeps a mail that is all quote whole', () => {
    expect(stripQuoted('> only\n> a quote')).toBe('> only\n> a quote');
  });

  it('takes linear time on hostile input', () => {
    const hostile = `${'On x wrote:\n'.repeat(20000)}${'From: x\nSent: y\nCc: z\n'.repeat(20000)}${'> q\n'.repeat(20000)}text`;
    const started = Date.now();
    stripQuoted(hostile);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
