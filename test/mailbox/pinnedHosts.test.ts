/**
 * Mail servers are connected to at the address that was checked, never at one a second DNS answer
 * gives (DNS rebinding, src/net/outbound.ts): a brand's SMTP host, a department mailbox's IMAP
 * and POP3 server. The names here resolve through a stand-in for the system resolver (the
 * `dns.lookup` every connection of Node asks, replaced for `*.pinned.test` names only): it can
 * answer one address to the first question and another to the next, as a rebinding name server
 * does. The servers are real: smtp-server and a throwaway dovecot.
 */
import './mailboxEnv';
import dns, { type LookupAddress } from 'node:dns';
import { rmSync, writeFileSync } from 'node:fs';
import { Brand, DepartmentEmail } from '../../src/db/models';
import { closeTransports, transportFor } from '../../src/mail/transports';
import { pollMailbox } from '../../src/mailbox/poll';
import { resetTlsOptions } from '../../src/mailbox/pollSummary';
import { startDovecot, type Dovecot } from '../helpers/dovecot';
import { unique, useApi } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';
import { startSmtp, type TestSmtp } from '../helpers/smtp';

const api = useApi();
const METADATA = '169.254.169.254';
const PASSWORD = 'secret-pin';
const domain = `${unique('pin').toLowerCase()}.test`;
const user = (name: string) => `${name}@${domain}`;

/** What the stand-in resolver answers for a `*.pinned.test` name: one address per question, the last one repeated. */
let answers: string[] = [];
const asked: string[] = [];
const realLookup = dns.lookup;

let smtp: TestSmtp;
let dovecot: Dovecot;
let departmentId: number;

beforeAll(async () => {
  jest.spyOn(dns, 'lookup').mockImplementation(((hostname: string, options: any, callback: any) => {
    const cb = typeof options === 'function' ? options : callback;
    if (!hostname.endsWith('.pinned.test')) return (realLookup as any)(hostname, options, callback);
    asked.push(hostname);
    const address = answers.length > 1 ? answers.shift()! : answers[0];
    const all = typeof options === 'object' && options?.all;
    process.nextTick(() => (all ? cb(null, [{ address, family: 4 } as LookupAddress]) : cb(null, address, 4)));
  }) as any);
  smtp = await startSmtp();
  dovecot = await startDovecot([{ user: user('imap'), password: PASSWORD }, { user: user('pop'), password: PASSWORD }]);
  writeFileSync(process.env.MAILBOX_TLS_CA_FILE!, dovecot.cert);
  resetTlsOptions();
  departmentId = expectSuccess(await api.post('/api/ticket/department', { name: unique('Pinned ') }), 'Successfully created new department!').id;
});
afterAll(async () => {
  jest.restoreAllMocks();
  closeTransports();
  await smtp?.close();
  await dovecot?.stop();
  rmSync(process.env.MAILBOX_TLS_CA_FILE!, { force: true });
});
beforeEach(() => {
  asked.length = 0;
});

describe('SMTP', () => {
  const brand = (id: number) => Brand.build({
    id, name: 'Pinned', email_method: 'smtp', smtp_host: `smtp${id}.pinned.test`, smtp_port: smtp.port, smtp_encryption: null,
    smtp_requires_auth: 0, smtp_username: null, smtp_password: null,
  } as any);
  const send = (b: Brand, to: string) => transportFor(b).sendMail({ from: 'desk@example.test', to, subject: 'Pinned', text: 'hello' });

  it('connects to the address its own check resolved, not to what the name says next', async () => {
    answers = ['127.0.0.1', METADATA]; // the check's answer, then a rebind to the metadata service
    const to = `${unique('rcpt')}@example.test`;
    await send(brand(970), to);
    expect(smtp.mailsTo(to)).toHaveLength(1);
    expect(asked).toEqual(['smtp970.pinned.test']); // one question, and the connection went where its answer said
  });

  it('refuses a name that resolves to a metadata address when it connects, and sends nothing', async () => {
    answers = [METADATA];
    const to = `${unique('rcpt')}@example.test`;
    await expect(send(brand(971), to)).rejects.toThrow(/169\.254\.169\.254 is a cloud metadata or link-local address/);
    expect(smtp.mailsTo(to)).toHaveLength(0);
  });
});

describe.each(['imap', 'pop3'] as const)('%s mailbox', (protocol) => {
  const mailbox = async () => {
    const name = protocol === 'imap' ? 'imap' : 'pop';
    const created = expectSuccess(await api.post(`/api/ticket/department/${departmentId}/email`, {
      address: `${unique(name)}@${domain}`, type: 1, protocol, server: `${protocol}.pinned.test`,
      port: protocol === 'imap' ? dovecot.ports.imap : dovecot.ports.pop3, encryption: 'none', username: user(name), password: PASSWORD,
    }), 'Successfully created new department email!');
    return created.id as number;
  };

  it('polls a server whose name keeps its address', async () => {
    answers = ['127.0.0.1'];
    const id = await mailbox();
    const result = await pollMailbox(id);
    expect(result).not.toHaveProperty('error');
    expect((await DepartmentEmail.findByPk(id))!.last_error).toBeNull();
    expect(asked.length).toBeGreaterThan(0);
  });

  it('refuses the connection when the name rebinds to a metadata address after the check', async () => {
    answers = ['127.0.0.1', METADATA]; // the poll's check sees loopback; the connection would get the metadata address
    const id = await mailbox();
    const result = await pollMailbox(id);
    expect(result).toEqual({ error: expect.stringMatching(/169\.254\.169\.254 is a cloud metadata or link-local address/) });
    expect((await DepartmentEmail.findByPk(id))!.last_error).toMatch(/cloud metadata/);
    expect(asked).toEqual([`${protocol}.pinned.test`, `${protocol}.pinned.test`]);
  });
});
