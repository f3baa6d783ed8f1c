/**
 * Mail with attachments in directory mode, end to end through a real dovecot and a real SMTP
 * server: a mail's file, imported by the mailbox worker, is written under ATTACHMENTS_DIR (its row
 * holds no bytes) and downloads byte for byte; an operator's reply with a file sends that file,
 * read from the directory, in the mail the user gets.
 */
import { attachmentsDir } from './directoryStorageEnv';
import '../mailbox/mailboxEnv';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { IncomingMail, Ticket, TicketAttachment, Upload } from '../../src/db/models';
import { moveAttachments } from '../../src/storage/moveAttachments';
import { pollMailbox } from '../../src/mailbox/poll';
import { newEmail, useApi } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { mailAbout } from '../notifications/support';
import { rawMail, useDeskMailbox } from '../mailbox/support';
import { dropQueuedMail } from '../helpers/jobs';
import { b64 } from '../ticket/ticketSupport';
import { asBytes } from '../helpers/bytes';

afterAll(() => dropQueuedMail());
afterAll(async () => {
  await moveAttachments('database');
  rmSync(attachmentsDir, { recursive: true, force: true });
});
const api = useApi();
const box = useDeskMailbox(api, 'dirmail');

describe('mail attachments in directory mode', () => {
  it('a mailed file is stored as a file and downloads; a reply with a file mails it from there', async () => {
    const from = newEmail('files');
    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(4000)]);
    const raw = await rawMail({ from, to: box.desk, subject: 'Invoice attached', attachments: [{ filename: 'invoice.pdf', content: pdf, contentType: 'application/pdf' }] });
    const { uid, uidValidity } = await box.dovecot.append(box.desk, raw);
    await pollMailbox(box.mailbox.id);
    const line = (await IncomingMail.findOne({ where: { department_email_id: box.mailbox.id, remote_uid: `${uidValidity}:${uid}` } }))!;
    expect(line.decision).toBe('new_ticket');

    const [file] = await TicketAttachment.findAll({ where: { ticket_id: line.ticket_id! } });
    expect(file.original_name).toBe('invoice.pdf');
    const upload = (await Upload.findOne({ where: { hash: file.upload_hash } }))!;
    expect([upload.storage, upload.contents]).toEqual(['directory', null]);
    const h = upload.hash;
    expect(readFileSync(join(attachmentsDir, h.slice(0, 2), h.slice(2, 4), h)).equals(pdf)).toBe(true);
    const downloaded = await asBytes(api.get(`/api/ticket/attachment/${file.id}/download`));
    expect((downloaded.body as Buffer).equals(pdf)).toBe(true);

    const ticket = (await Ticket.findByPk(line.ticket_id!))!;
    const log = Buffer.from(`line 1\n${randomBytes(2000).toString('hex')}\n`);
    const reply = expectSuccess(await api.post('/api/ticket/message', {
      ticket_id: ticket.id, user_id: box.world.direct.id, text: 'The corrected invoice is attached.', attachment: [{ filename: 'corrected.log', contents: b64(log) }],
    }), 'Successfully created new message!');
    expect((await Upload.findOne({ where: { hash: reply.attachments[0].upload_hash } }))!.storage).toBe('directory');
    const mail = await mailAbout(box.smtp, ticket, reply.id, 'the reply with its file');
    expect(mail.envelopeTo).toContain(from);
    expect(mail.parsed.attachments.map((a) => [a.filename, a.content.equals(log)])).toEqual([['corrected.log', true]]);
  });
});
