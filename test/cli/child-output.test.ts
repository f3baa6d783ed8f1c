/**
 * `npm start`'s output: each child's line once, its process named once, and piped output made of
 * JSON lines only (a child's plain stderr line becomes one).
 */
import { PassThrough } from 'node:stream';
import { childLine, relayLines } from '../../src/cli/childOutput';
import { prettyLine } from '../../src/logFormat';

const from = { name: 'web', pid: 42, stream: 'stdout' as const };
const logLine = JSON.stringify({ level: 30, time: 1700000000000, pid: 42, proc: 'web', port: 3000, msg: 'web process listening' });

describe('a child\'s line', () => {
  it('stays the same JSON line when the output is JSON', () => {
    expect(childLine(logLine, from, 'json')).toBe(`${logLine}\n`);
  });

  it('is one pretty line naming the process once on a terminal', () => {
    const line = childLine(logLine, from, 'pretty');
    expect(line).toBe(prettyLine(logLine));
    expect(line.match(/\bweb\b/g)).toEqual(['web', 'web']); // `web | web process listening`: the name, then the message's own word
    expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO  web \| web process listening port=3000\n$/);
  });

  it('becomes a JSON line when it was plain text (an error on stderr)', () => {
    const out = childLine('Startup failed: port 3000 on 0.0.0.0 is already in use', { ...from, stream: 'stderr' }, 'json');
    expect(out.endsWith('\n')).toBe(true);
    expect(JSON.parse(out)).toMatchObject({ level: 50, pid: 42, proc: 'web', msg: 'Startup failed: port 3000 on 0.0.0.0 is already in use', time: expect.any(Number) });
    expect(childLine('[1, 2]', from, 'json')).toMatch(/^\{"level":30,.*"msg":"\[1, 2\]"\}\n$/);
  });

  it('is relayed whole when it arrives in pieces', async () => {
    const input = new PassThrough();
    const out = new PassThrough();
    let written = '';
    out.on('data', (c) => { written += c; });
    relayLines(input, out, from, 'json');
    input.write(logLine.slice(0, 20));
    input.write(`${logLine.slice(20)}\n\nplain`);
    input.end('\n');
    await new Promise((r) => input.on('end', r));
    await new Promise((r) => setImmediate(r));
    const lines = written.split('\n').filter(Boolean);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(logLine);
    expect(JSON.parse(lines[1])).toMatchObject({ proc: 'web', msg: 'plain' });
  });
});
