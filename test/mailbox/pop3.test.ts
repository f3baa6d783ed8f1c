import net from 'node:net';
import { Pop3Client, Pop3Error, type Pop3Encryption } from '../../src/mailbox/pop3';
import { startDovecot, type Dovecot } from '../helpers/dovecot';

// The POP3 client against a real dovecot: plain, STLS and implicit TLS.

const USER = { user: 'support@example.test', password: 'secret1' };
let dc: Dovecot;
let seq = 0;

beforeAll(async () => {
  dc = await startDovecot([USER]);
});
afterAll(() => dc?.stop());

/** A latin1 message sent as 8bit, with lines that need dot-stuffing (one is a lone '.'). */
function rawMessage(messageId: string, bodyLines = ['.a line that began with a dot', '..and one with two', '.', 'the end']): Buffer {
  const head = [
    'From: Alice <alice@example.test>', `To: ${USER.user}`, 'Subject: 8-bit test', `Message-ID: ${messageId}`,
    'MIME-Version: 1.0', 'Content-Type: text/plain; charset=iso-8859-1', 'Content-Transfer-Encoding: 8bit',
  ].join('\r\n');
  const eightBit = Buffer.from('Caf\xe9 cr\xe8me br\xfbl\xe9e \xa9\xff\x80', 'latin1');
  return Buffer.concat([Buffer.from(`${head}\r\n\r\n`), eightBit, Buffer.from(`\r\n${bodyLines.join('\r\n')}\r\n`, 'latin1')]);
}

/** Appends a fresh message over IMAP; returns it with the UIDL dovecot gives it (%08Xu%08Xv). */
async function appendOne(lines?: string[]) {
  const messageId = `<pop3-${++seq}-${Date.now()}@example.test>`;
  const raw = rawMessage(messageId, lines);
  const { uid, uidValidity } = await dc.append(USER.user, raw);
  const uidl = uid.toString(16).padStart(8, '0') + Number(uidValidity).toString(16).padStart(8, '0');
  return { raw, messageId, uidl };
}

const portOf = (encryption: Pop3Encryption) => (encryption === 'ssl' ? dc.ports.pop3s : dc.ports.pop3);
const connect = (encryption: Pop3Encryption, over: { password?: string; tls?: object } = {}) => Pop3Client.connect({
  host: dc.host, port: portOf(encryption), encryption, user: USER.user, password: over.password ?? USER.password,
  tls: over.tls ?? { ca: dc.cert }, timeoutMs: 5000,
});

async function numberOf(c: Pop3Client, uidl: string): Promise<number | undefined> {
  return (await c.uidl()).find((e) => e.uid.toLowerCase() === uidl)?.number;
}

describe.each<Pop3Encryption>(['none', 'tls', 'ssl'])('encryption %s', (encryption) => {
  test('UIDL lists the message and RETR returns its 8-bit bytes exactly, dot lines unstuffed', async () => {
    const { raw, uidl } = await appendOne();
    const c = await connect(encryption);
    try {
      const list = await c.uidl();
      expect(list.length).toBeGreaterThan(0);
      for (const e of list) expect(e.uid).toMatch(/^[0-9a-f]{16}$/i);
      const number = list.find((e) => e.uid.toLowerCase() === uidl)?.number;
      expect(number).toBeDefined();
      const got = await c.retrieve(number!);
      expect(got.toString('latin1')).toBe(raw.toString('latin1')); // readable diff on failure
      expect(got.equals(raw)).toBe(true);
      const text = got.toString('latin1');
      expect(text).toContain('\r\n.a line that began with a dot\r\n..and one with two\r\n.\r\nthe end\r\n');
      expect(text).toContain('Caf\xe9 cr\xe8me');
    } finally {
      await c.quit();
    }
  });

  test('DELE then close() keeps the message; DELE then QUIT removes it', async () => {
    const { uidl, messageId } = await appendOne();
    const first = await connect(encryption);
    await first.delete((await numberOf(first, uidl))!);
    first.close();
    await expect(first.uidl()).rejects.toThrow(/closed/);

    const second = await connect(encryption);
    const number = await numberOf(second, uidl);
    expect(number).toBeDefined(); // the DELE was not applied
    await second.delete(number!);
    await second.quit();

    const third = await connect(encryption);
    try {
      expect(await numberOf(third, uidl)).toBeUndefined();
    } finally {
      await third.quit();
    }
    expect((await dc.messages(USER.user)).map((m) => m.messageId)).not.toContain(messageId);
  });

  test('a wrong password rejects with authenticationFailed', async () => {
    const err = await connect(encryption, { password: 'wrong' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Pop3Error);
    expect((err as Pop3Error).authenticationFailed).toBe(true);
    expect((err as Pop3Error).serverText).toMatch(/auth/i);
    expect((err as Error).message).not.toContain('wrong');
  });

  if (encryption !== 'none') {
    test('the self-signed certificate is refused unless trusted (so TLS is really used)', async () => {
      await expect(connect(encryption, { tls: {} })).rejects.toThrow(/self[- ]signed/i);
    });
  }
});

test('a large message with many dot lines comes back intact (buffer growth, chunk boundaries)', async () => {
  const lines = Array.from({ length: 20000 }, (_, i) => (i % 3 === 0 ? `.${i}` : i % 3 === 1 ? '.' : `line \xe9 ${i}`));
  const { raw, uidl } = await appendOne(lines);
  const c = await connect('none');
  try {
    const got = await c.retrieve((await numberOf(c, uidl))!);
    expect(got.length).toBe(raw.length);
    expect(got.equals(raw)).toBe(true);
  } finally {
    await c.quit();
  }
});

test('a port where nothing listens rejects promptly', async () => {
  const port = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = s.address() as net.AddressInfo;
      s.close(() => resolve(p));
    });
  });
  const started = Date.now();
  await expect(Pop3Client.connect({ host: '127.0.0.1', port, encryption: 'none', user: 'u', password: 'p' })).rejects.toThrow(/ECONNREFUSED/);
  expect(Date.now() - started).toBeLessThan(1000);
});

/** A scripted fake server: `reply` maps each received line to what is sent back (undefined: silence). */
async function fakeServer(reply: (line: string) => string | undefined) {
  const received: string[] = [];
  const server = net.createServer((s) => {
    s.write('+OK fake ready\r\n');
    let pending = '';
    s.on('data', (d) => {
      pending += d.toString('latin1');
      for (let i; (i = pending.indexOf('\r\n')) >= 0; pending = pending.slice(i + 2)) {
        const line = pending.slice(0, i);
        received.push(line);
        const out = reply(line);
        if (out !== undefined) s.write(out);
      }
    });
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return { port, received, close: () => new Promise((r) => server.close(r)) };
}

test('tls: a server that refuses STLS gets no credentials', async () => {
  const fake = await fakeServer((line) => (line === 'STLS' ? '-ERR not supported\r\n' : '+OK\r\n'));
  try {
    await expect(Pop3Client.connect({ host: '127.0.0.1', port: fake.port, encryption: 'tls', user: 'u', password: 'p' })).rejects.toThrow(/refused STLS.*not supported/);
    expect(fake.received).toEqual(['STLS']);
  } finally {
    await fake.close();
  }
});

test('tls: plaintext sent after the STLS +OK (injection) is refused', async () => {
  const fake = await fakeServer((line) => (line === 'STLS' ? '+OK begin TLS\r\n+OK injected\r\n' : '+OK\r\n'));
  try {
    await expect(Pop3Client.connect({ host: '127.0.0.1', port: fake.port, encryption: 'tls', user: 'u', password: 'p' })).rejects.toThrow(/before the TLS handshake/);
    expect(fake.received).toEqual(['STLS']);
  } finally {
    await fake.close();
  }
});

test('a command without an answer times out with a clear error, and the client is unusable after', async () => {
  const fake = await fakeServer((line) => (line.startsWith('UIDL') ? undefined : '+OK\r\n'));
  try {
    const c = await Pop3Client.connect({ host: '127.0.0.1', port: fake.port, encryption: 'none', user: 'u', password: 'p', timeoutMs: 300 });
    const started = Date.now();
    await expect(c.uidl()).rejects.toThrow(`POP3 UIDL: no response from 127.0.0.1:${fake.port} within 300 ms`);
    expect(Date.now() - started).toBeLessThan(1000);
    await expect(c.retrieve(1)).rejects.toThrow(/no response from .* within 300 ms/);
    expect(fake.received).toEqual(['USER u', 'PASS p', 'UIDL']);
  } finally {
    await fake.close();
  }
});

test('-ERR rejects with the server text; the session goes on', async () => {
  const fake = await fakeServer((line) => (line === 'RETR 7' ? '-ERR no such message\r\n' : line === 'UIDL' ? '+OK\r\n1 abc\r\n.\r\n' : '+OK\r\n'));
  try {
    const c = await Pop3Client.connect({ host: '127.0.0.1', port: fake.port, encryption: 'none', user: 'u', password: 'p' });
    const err = await c.retrieve(7).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Pop3Error);
    expect(err).toMatchObject({ serverText: 'no such message', authenticationFailed: false });
    // Commands issued together run one at a time, in order.
    const [list, retrSeven] = await Promise.all([c.uidl(), c.retrieve(7).catch((e: Error) => e.message)]);
    expect(list).toEqual([{ number: 1, uid: 'abc' }]);
    expect(retrSeven).toBe('POP3 RETR failed: -ERR no such message');
    await c.quit();
    expect(fake.received).toEqual(['USER u', 'PASS p', 'RETR 7', 'UIDL', 'RETR 7', 'QUIT']);
  } finally {
    await fake.close();
  }
});
