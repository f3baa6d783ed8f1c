/**
 * The TNEF reader (src/mailbox/tnef.ts) on winmail.dat files built here byte by byte as
 * [MS-OXTNEF] lays them out, and the Thread-Index Outlook threads by.
 */
import { isTnef, readTnef, TnefError } from '../../src/mailbox/tnef';
import { threadIndex, threadTopic } from '../../src/ticket/mail/outlookThread';

import { attribute, padded, props, tnef, u16, u32, z } from './tnefBuilder';

describe('readTnef', () => {
  it('reads the files (short and long names, MIME type) and the plain body', () => {
    const png = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10, 1, 2, 3]);
    const pdf = Buffer.from('%PDF-1.4 quarterly report');
    const file = tnef(
      attribute(1, 0x00069007, Buffer.from([0xe4, 0x04, 0, 0, 0, 0, 0, 0])), // attOemCodepage: skipped
      attribute(1, 0x0002800c, z('The printer shows error 42.\r\nSee the photo.')), // attBody
      attribute(2, 0x00069002, Buffer.alloc(14)), // attAttachRenddata: a file begins
      attribute(2, 0x00018010, z('PHOTO~1.PNG')),
      attribute(2, 0x0006800f, png),
      attribute(2, 0x00069005, props([
        { type: 0x1f, id: 0x3707, value: z('photo of the printer.png', 'utf16le') },
        { type: 0x1e, id: 0x370e, value: z('image/png') },
        { type: 0x03, id: 0x0e21, value: u32(0) }, // a fixed-size property in between
      ])),
      attribute(2, 0x00069002, Buffer.alloc(14)),
      attribute(2, 0x00018010, z('report.pdf')),
      attribute(2, 0x0006800f, pdf),
    );
    const out = readTnef(file);
    expect(out.text).toBe('The printer shows error 42.\r\nSee the photo.');
    expect(out.files).toEqual([
      { filename: 'photo of the printer.png', contents: png, mimeType: 'image/png' },
      { filename: 'report.pdf', contents: pdf, mimeType: null },
    ]);
  });

  it('takes the body from the MAPI properties (PR_BODY, PR_BODY_HTML), named properties skipped', () => {
    const named = Buffer.concat([u16(0x0003), u16(0x8001), Buffer.alloc(16, 7), u32(1), u32(6), padded(z('abc', 'utf16le').subarray(0, 6)), u32(5)]);
    const block = Buffer.concat([
      u32(3), named,
      props([{ type: 0x1f, id: 0x1000, value: z('Unicode body ✓', 'utf16le') }]).subarray(4),
      props([{ type: 0x102, id: 0x1013, value: Buffer.from('<p>html body</p>') }]).subarray(4),
    ]);
    const out = readTnef(tnef(attribute(1, 0x00069003, block)));
    expect([out.text, out.html, out.files]).toEqual(['Unicode body ✓', '<p>html body</p>', []]);
  });

  it('refuses what is not TNEF or ends early, with a TnefError', () => {
    expect(() => readTnef(Buffer.from('GIF89a....'))).toThrow(TnefError);
    const cut = tnef(attribute(2, 0x0006800f, Buffer.alloc(100))).subarray(0, 60);
    expect(() => readTnef(cut)).toThrow(/longer than the file/);
    expect(isTnef('application/ms-tnef', undefined)).toBe(true);
    expect(isTnef('application/octet-stream', 'WINMAIL.DAT')).toBe(true);
    expect(isTnef('application/octet-stream', 'winmail.txt')).toBe(false);
  });
});

describe('Thread-Index', () => {
  const ticket = { id: 7, created_at: 1_790_000_000, token: 'abc' };
  it('is 22 bytes for the first mail and the same header plus a 5-byte child for the next', () => {
    const first = Buffer.from(threadIndex(ticket, ticket.created_at, true), 'base64');
    const next = Buffer.from(threadIndex(ticket, ticket.created_at + 3600, false), 'base64');
    expect(first).toHaveLength(22);
    expect(first[0]).toBe(1);
    expect(next).toHaveLength(27);
    expect(next.subarray(0, 22)).toEqual(first);
    // The header's time is the ticket's creation as a FILETIME's five high bytes.
    const ft = BigInt(ticket.created_at) * 10_000_000n + 116444736000000000n;
    expect(first.subarray(1, 6).toString('hex')).toBe(ft.toString(16).padStart(16, '0').slice(0, 10));
    expect(Buffer.from(threadIndex({ ...ticket, id: 8 }, ticket.created_at, true), 'base64').subarray(6)).not.toEqual(first.subarray(6));
    expect(threadTopic('RE: WG: [#123456] Printer on fire')).toBe('Printer on fire');
  });
});
