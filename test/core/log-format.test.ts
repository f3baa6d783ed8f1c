import { prettyLine, resolveLogFormat } from '../../src/logFormat';

const line = (o: Record<string, unknown>) => `${JSON.stringify({ level: 30, time: new Date(2030, 0, 2, 3, 4, 5, 6).getTime(), pid: 1, hostname: 'h', proc: 'web', ...o })}\n`;

describe('LOG_FORMAT', () => {
  it('auto is pretty on a terminal and JSON elsewhere; json and pretty are what they say', () => {
    expect(resolveLogFormat('auto', true)).toBe('pretty');
    expect(resolveLogFormat('auto', false)).toBe('json');
    expect(resolveLogFormat('json', true)).toBe('json');
    expect(resolveLogFormat('pretty', false)).toBe('pretty');
  });
});

describe('pretty log lines', () => {
  it('show time, level, process and message, then the other fields as key=value', () => {
    expect(prettyLine(line({ msg: 'web process listening', port: 3000, host: '0.0.0.0', note: 'two words', flags: { a: 1 } })))
      .toBe('03:04:05.006 INFO  web | web process listening port=3000 host=0.0.0.0 note="two words" flags={"a":1}\n');
  });

  it('read a request line as method, path, status and duration', () => {
    expect(prettyLine(line({ level: 40, reqId: 'r-1', req: { method: 'GET', url: '/api/core/brand' }, res: { statusCode: 404 }, responseTime: 7, msg: 'request completed' })))
      .toBe('03:04:05.006 WARN  web | GET /api/core/brand 404 7ms reqId=r-1\n');
  });

  it('put an error\'s message on the line and its stack below it', () => {
    const out = prettyLine(line({ level: 50, msg: 'unhandled error', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at f (a.js:1:1)' } }));
    expect(out).toBe('03:04:05.006 ERROR web | unhandled error err=boom\n    Error: boom\n    at f (a.js:1:1)\n');
  });

  it('pass a line that is not JSON through', () => {
    expect(prettyLine('plain text')).toBe('plain text\n');
  });
});
