/**
 * The GQTP client (src/ticket/tickets/search/gqtp.ts) against scripted TCP servers, for what a
 * real Groonga does only by accident: an answer in several frames, a kept connection that the
 * server closed meanwhile (the command once more, on a new one), a server that never answers
 * (the timeout), none listening. Against a real Groonga: ticket-search-groonga.test.ts.
 */
import net from 'node:net';
import { gqtpExchange } from '../../src/ticket/tickets/search/gqtp';

/** A frame of an answer: the 24-byte header (protocol, flags, status, size), then the body. */
function frame(body: string, { more = false, status = 0 } = {}): Buffer {
  const b = Buffer.from(body);
  const h = Buffer.alloc(24);
  h.writeUInt8(0xc7, 0);
  h.writeUInt8(more ? 1 : 2, 5);
  h.writeUInt16BE(status, 6);
  h.writeUInt32BE(b.length, 8);
  return Buffer.concat([h, b]);
}

/** A server that answers each command with `answer(connection number, command number, command)`; null: closes the connection. */
async function scripted(answer: (conn: number, n: number, command: string) => Buffer[] | null) {
  let conns = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    const id = ++conns;
    let n = 0;
    s.on('data', (d) => {
      const frames = answer(id, ++n, d.subarray(24).toString());
      if (!frames) {
        s.destroy();
        return;
      }
      // In two writes, the first inside a header: the client must wait for whole frames.
      const all = Buffer.concat(frames);
      s.write(all.subarray(0, 10));
      setImmediate(() => s.write(all.subarray(10)));
    });
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => conns,
    close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
  };
}

describe('the GQTP client', () => {
  it('sends the command in a frame and joins an answer of several frames, or of a long one; an error is its status and message', async () => {
    const big = `"${'x'.repeat(1_000_000)}"`;
    const server = await scripted((_c, _n, command) => (command === '/d/bad'
      ? [frame('[bad] invalid name', { status: 65514 })]
      : command === '/d/big' ? [frame(big)]
        : [frame('[[', { more: true }), frame(JSON.stringify(command), { more: true }), frame(']]')]));
    try {
      expect(await gqtpExchange('127.0.0.1', server.port, '/d/select?table=x&query=a+b', 2000)).toEqual({ status: 0, text: '[["/d/select?table=x&query=a+b"]]' });
      expect(await gqtpExchange('127.0.0.1', server.port, '/d/bad', 2000)).toEqual({ status: 65514, text: '[bad] invalid name' });
      // A frame of a megabyte, in many pieces of TCP.
      expect(await gqtpExchange('127.0.0.1', server.port, '/d/big', 2000)).toEqual({ status: 0, text: big });
      // All on the one connection, kept open.
      expect(server.connections()).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('runs commands at once on up to eight connections, the rest waiting for one', async () => {
    const server = await scripted(() => [frame('1')]);
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => gqtpExchange('127.0.0.1', server.port, `/d/status?i=${i}`, 2000)));
      expect(answers.every((a) => a.text === '1')).toBe(true);
      expect(server.connections()).toBeLessThanOrEqual(8);
    } finally {
      await server.close();
    }
  });

  it('sends a command again, once, on a new connection when the server closed a kept one before answering', async () => {
    // The first connection answers its first command and closes at its second.
    const server = await scripted((conn, n) => (conn === 1 && n === 2 ? null : [frame(`"${conn}:${n}"`)]));
    try {
      expect((await gqtpExchange('127.0.0.1', server.port, '/d/status', 2000)).text).toBe('"1:1"');
      expect((await gqtpExchange('127.0.0.1', server.port, '/d/status', 2000)).text).toBe('"2:1"');
    } finally {
      await server.close();
    }
    // A new connection that closes before answering: no second try.
    const closing = await scripted(() => null);
    try {
      await expect(gqtpExchange('127.0.0.1', closing.port, '/d/status', 2000)).rejects.toThrow('connection closed');
      expect(closing.connections()).toBe(1);
    } finally {
      await closing.close();
    }
  });

  it('gives up on a server that does not answer in time, and on one that is not there', async () => {
    const mute = await scripted(() => []);
    try {
      await expect(gqtpExchange('127.0.0.1', mute.port, '/d/status', 200)).rejects.toThrow('no answer within 0.2 s');
    } finally {
      await mute.close();
    }
    const free = await scripted(() => []);
    const port = free.port;
    await free.close();
    await expect(gqtpExchange('127.0.0.1', port, '/d/status', 2000)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
