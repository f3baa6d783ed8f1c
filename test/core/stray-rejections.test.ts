/**
 * A rejection nobody awaits: a lost database or Redis connection (a client library's promise
 * that nobody held) keeps the process running; anything else ends it.
 */
import * as mariadb from 'mariadb';
import IORedis from 'ioredis';
import { freePort } from '../helpers/ports';
import { guardStrayRejections, onStrayRejection } from '../../src/lib/strayRejections';

test('a MariaDB connection that cannot be opened is logged and the process carries on', async () => {
  const port = await freePort(); // nothing listens there
  const err = await mariadb.createConnection({ host: '127.0.0.1', port, user: 'root', connectTimeout: 2000 }).then(
    () => { throw new Error('connected to a closed port'); },
    (e: unknown) => e,
  );
  expect(onStrayRejection(err)).toBe('kept running');
});

test('a Redis connection that cannot be opened is logged and the process carries on', async () => {
  const port = await freePort();
  const client = new IORedis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  const err = await client.connect().then(() => new Error('connected to a closed port'), (e: unknown) => e);
  client.disconnect();
  expect(onStrayRejection(err)).toBe('kept running');
});

test('any other rejection ends the process, as Node would', () => {
  expect(onStrayRejection(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBe('exit');
  expect(onStrayRejection(undefined)).toBe('exit');
});

test('the guard is a listener of the process: a stray connection failure does not end it', async () => {
  const before = process.listenerCount('unhandledRejection');
  guardStrayRejections();
  const listeners = process.listeners('unhandledRejection');
  expect(listeners).toHaveLength(before + 1);
  const guard = listeners[listeners.length - 1];
  const exit = jest.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
  try {
    const lost = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED', sqlState: '08S01' });
    guard(lost, Promise.resolve());
    expect(exit).not.toHaveBeenCalled();
    guard(new RangeError('a bug'), Promise.resolve());
    expect(exit).toHaveBeenCalledWith(1);
  } finally {
    exit.mockRestore();
    process.removeListener('unhandledRejection', guard);
  }
});
