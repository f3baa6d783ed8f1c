import { createServer } from 'node:http';
import { deflateSync, gzipSync } from 'node:zlib';
import request from 'supertest';
import { logger } from '../../src/logger';
import { useApi, unique, nowSec } from '../helpers/app';
import { expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { expectTimestamps, uniqueIpv4 } from './support';

const api = useApi();

const authed = (t: request.Test) => t.auth(api.token, 'x');

async function newSpamRule(): Promise<any> {
  return expectSuccess(await api.post('/api/core/spamrule', { text: unique('conv'), type: 0 }), 'Successfully created new spam rule!');
}

describe('the envelope', () => {
  it('wraps a single record in status, message and data', async () => {
    const res = await api.get('/api/core/brand/1');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'message', 'status']);
    expect(res.body).toMatchObject({ status: 'success', message: null });
  });

  it('is sent as Express would: JSON in UTF-8, its length in bytes, and no body for HEAD', async () => {
    // A list long enough to be over Express's 1,000 characters, with text of more than one byte a character.
    const name = `Café ☕ ${unique('json')}`;
    for (let i = 0; i < 12; i++) expectSuccess(await api.post('/api/core/spamrule', { text: `${name} ${i}`, type: 0 }), 'Successfully created new spam rule!');
    // Newest first: the worker's database may hold other files' rules (this file's on the first page).
    const newest = { limit: 50, order_column: 'id', order_direction: 'desc' };
    const res = await authed(request(api.app).get('/api/core/spamrule').query(newest)).buffer(true).parse((r, done) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => done(null, Buffer.concat(chunks)));
    });
    const raw = res.body as Buffer;
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(raw.length).toBeGreaterThan(1000);
    expect(Number(res.headers['content-length'])).toBe(raw.length);
    const body = JSON.parse(raw.toString('utf8'));
    expect(body.data.map((r: { text: string }) => r.text)).toContain(`${name} 11`);
    const head = await authed(request(api.app).head('/api/core/spamrule').query(newest));
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(head.headers['content-length'])).toBe(raw.length);
    expect(head.text ?? '').toBe('');
  });

  it('adds count to lists', async () => {
    const data = expectList(await api.get('/api/core/language'));
    expect(data.length).toBeGreaterThan(0);
  });

  it('carries a message on writes', async () => {
    const rule = await newSpamRule();
    expect(Number.isInteger(rule.id)).toBe(true);
  });

  it('returns integer UNIX timestamps in seconds', async () => {
    const before = nowSec();
    const rule = await newSpamRule();
    expectTimestamps(rule, before);
    const brand = expectSuccess(await api.get('/api/core/brand/1'));
    expect(Number.isInteger(brand.created_at)).toBe(true);
    expect(brand.created_at).toBeLessThan(1e10); // seconds, not milliseconds
  });
});

describe('errors outside the resources', () => {
  it('answers an unknown route under /api with a 404 envelope', async () => {
    const res = await api.get('/api/core/nothing-here');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expectError(res, 404, 'The requested URL GET /api/core/nothing-here was not found.');
  });

  it('answers an unknown route outside /api with a 404 envelope', async () => {
    const res = await request(api.app).post('/no/such/page');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expectError(res, 404, 'The requested URL POST /no/such/page was not found.');
  });

  it.each([
    '/api/ticket/ticket/%E0%A4%A', '/api/user/user/%ff', '/api/ticket/tag/%', '/api/export/%E0', '/api/core/webhook/1/delivery/%E0',
  ])('answers %s, a path segment that is no valid percent-encoding, with 404', async (path) => {
    const res = await api.get(path);
    expectError(res, 404, `The requested URL GET ${path} was not found.`);
  });

  it.each([
    ['POST', '/api/core/brand/1', 'GET, PUT'],
    ['DELETE', '/api/core/brand/1', 'GET, PUT'],
    ['PUT', '/api/core/ipban', 'GET, POST'],
    ['DELETE', '/api/core/spamrule', 'GET, POST'],
    ['PATCH', '/api/core/ipwhitelist/1', 'GET, PUT, DELETE'],
    ['POST', '/api/core/language', 'GET'],
  ])('answers %s %s with 405 and Allow: %s', async (method, path, allow) => {
    const res = await authed(request(api.app)[method.toLowerCase() as 'post'](path));
    expect(res.headers.allow).toBe(allow);
    expectError(res, 405, `The ${method} method is not supported here. Supported methods: ${allow}.`);
  });

  it('answers a body that is not valid JSON with 400', async () => {
    const res = await authed(request(api.app).post('/api/core/spamrule').set('Content-Type', 'application/json').send('{"text": "x", "type": '));
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expectError(res, 400, 'The request body is not valid JSON.');
  });

  it('answers a JSON body that is not an object with 422, and changes nothing', async () => {
    const rule = await newSpamRule();
    for (const body of ['[{"text":"x","type":0}]', 'null', ' null ', '"str"', '5', 'true', '[]']) {
      for (const req of [request(api.app).post('/api/core/spamrule'), request(api.app).put(`/api/core/spamrule/${rule.id}`)]) {
        expectError(await authed(req.set('Content-Type', 'application/json').send(body)), 422, 'The request body must be an object of fields.');
      }
    }
    expect(expectSuccess(await api.get(`/api/core/spamrule/${rule.id}`))).toEqual(rule);
    // No body, or an empty one, is no fields: the update changes nothing and succeeds.
    expectSuccess(await authed(request(api.app).put(`/api/core/spamrule/${rule.id}`)), 'Successfully updated the spam rule!');
    expectSuccess(await authed(request(api.app).put(`/api/core/spamrule/${rule.id}`).set('Content-Type', 'application/json').send('')), 'Successfully updated the spam rule!');
    expectError(await authed(request(api.app).post('/api/core/spamrule').set('Content-Type', 'application/json').send('nul')), 400, 'The request body is not valid JSON.');
  });

  it('reads every application/*+json body as JSON', async () => {
    for (const type of ['application/vnd.api+json', 'application/merge-patch+json; charset=utf-8', 'Application/JSON; charset="UTF-8"', 'application/json; charset=us-ascii']) {
      const text = unique('typed');
      const rule = expectSuccess(await authed(request(api.app).post('/api/core/spamrule').set('Content-Type', type).send(JSON.stringify({ text, type: 0 }))), 'Successfully created new spam rule!');
      expect(rule).toMatchObject({ text, type: 0 });
    }
    expectError(await authed(request(api.app).post('/api/core/spamrule').set('Content-Type', 'application/vnd.api+json').send('{"text": ')), 400, 'The request body is not valid JSON.');
    // A +json type outside application/ is no JSON the API reads: refused rather than read as no fields.
    expectError(await authed(request(api.app).post('/api/core/spamrule').set('Content-Type', 'text/x+json').send('{"text":"x","type":0}')), 415, 'The request body must be application/x-www-form-urlencoded or application/json.');
  });

  it.each(['utf-16', 'utf-16le', 'utf-32', 'iso-8859-1', 'x-unknown'])('answers a JSON body in charset %s with 415, and changes nothing', async (charset) => {
    const text = unique('charset');
    const body = Buffer.from(JSON.stringify({ text, type: 0 }), charset === 'utf-16le' ? 'utf16le' : 'utf8');
    const res = await authed(request(api.server).post('/api/core/spamrule').set('Content-Type', `application/json; charset=${charset}`)
      .serialize((b: unknown) => b as string).send(body as unknown as string));
    expectError(res, 415, `The charset "${charset}" is not supported.`);
    const all = expectList(await api.get('/api/core/spamrule', { limit: 1000 }));
    expect(all.filter((r) => r.text === text)).toEqual([]);
  });

  it('answers a body over the size limit (25mb) with 413', async () => {
    const text = 'a'.repeat(26 * 1024 * 1024);
    const res = await authed(request(api.app).post('/api/core/spamrule').set('Content-Type', 'application/json').send(JSON.stringify({ text, type: 0 })));
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expectError(res, 413, 'The request body is larger than the limit of 26214400 bytes.');
  });

  it('answers a form body over the size limit with 413', async () => {
    const res = await authed(request(api.app).post('/api/core/spamrule').type('form').send(`type=0&text=${'b'.repeat(26 * 1024 * 1024)}`));
    expectError(res, 413, 'The request body is larger than the limit of 26214400 bytes.');
  });

  it.each(['text/plain', 'application/xml', 'multipart/form-data; boundary=x'])('answers a %s body with 415', async (type) => {
    const text = unique('plain');
    const res = await authed(request(api.app).post('/api/core/spamrule').set('Content-Type', type).send(`text=${text}&type=0`));
    expectError(res, 415, 'The request body must be application/x-www-form-urlencoded or application/json.');
    const all = expectList(await api.get('/api/core/spamrule', { limit: 1000 }));
    expect(all.filter((r) => r.text === text)).toEqual([]);
  });
});

describe('X-HTTP-Method-Override', () => {
  it('makes a POST act as a PUT', async () => {
    const rule = await newSpamRule();
    const text = unique('overridden');
    const res = await authed(request(api.app).post(`/api/core/spamrule/${rule.id}`).set('X-HTTP-Method-Override', 'PUT').type('form').send({ text, type: 2 }));
    const updated = expectSuccess(res, 'Successfully updated the spam rule!');
    expect(updated).toMatchObject({ id: rule.id, text, type: 2 });
    expect(expectSuccess(await api.get(`/api/core/spamrule/${rule.id}`)).text).toBe(text);
  });

  it('makes a POST act as a DELETE', async () => {
    const rule = await newSpamRule();
    const res = await authed(request(api.app).post(`/api/core/spamrule/${rule.id}`).set('X-HTTP-Method-Override', 'DELETE'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'success', message: 'Successfully deleted the spam rule!', data: null });
    expectNotFound(await api.get(`/api/core/spamrule/${rule.id}`), 'spam rule');
  });

  it('accepts the method name in lower case', async () => {
    const rule = await newSpamRule();
    const res = await authed(request(api.app).post(`/api/core/spamrule/${rule.id}`).set('X-HTTP-Method-Override', 'delete'));
    expect(res.status).toBe(200);
    expect((await api.get(`/api/core/spamrule/${rule.id}`)).status).toBe(404);
  });

  it.each(['GET', 'TRACE', 'PATCH', 'POST', 'nonsense'])('answers an override of %s with 400 and does nothing', async (method) => {
    const rule = await newSpamRule();
    const res = await authed(request(api.app).post(`/api/core/spamrule/${rule.id}`).set('X-HTTP-Method-Override', method).type('form').send({ text: 'changed' }));
    expectError(res, 400, 'The X-HTTP-Method-Override header must be PUT or DELETE.');
    expect(expectSuccess(await api.get(`/api/core/spamrule/${rule.id}`))).toEqual(rule);
  });

  it('is ignored on a GET', async () => {
    const rule = await newSpamRule();
    const res = await authed(request(api.app).get(`/api/core/spamrule/${rule.id}`).set('X-HTTP-Method-Override', 'DELETE'));
    expect(expectSuccess(res)).toEqual(rule);
    expect(expectSuccess(await api.get(`/api/core/spamrule/${rule.id}`))).toEqual(rule);
  });
});

describe('JSON bodies', () => {
  it('are accepted by the brand create and update', async () => {
    const name = unique('Json brand');
    const brand = expectSuccess(await api.postJson('/api/core/brand', { name, enabled: false, smtp_port: 587, smtp_requires_auth: true }), 'Successfully created new brand!');
    expect(brand).toMatchObject({ name, enabled: 0, smtp_port: 587, smtp_requires_auth: 1 });
    const res = await authed(request(api.app).put(`/api/core/brand/${brand.id}`).type('json').send({ enabled: true, smtp_encryption: 'tls' }));
    expect(expectSuccess(res, 'Successfully updated the brand!')).toMatchObject({ enabled: 1, smtp_encryption: 'tls', smtp_port: 587 });
  });

  it('are accepted by the ban create and update', async () => {
    const ip = uniqueIpv4();
    const expiry = nowSec() + 600;
    const ban = expectSuccess(await api.postJson('/api/core/ipban', { ip, type: false, expiry_time: expiry, event_api: false, reason: 'json' }), 'Successfully created new ban!');
    expect(ban).toMatchObject({ ip, type: 0, expiry, event_api: 0, event_user: 1, event_operator: 1, reason: 'json' });
    const res = await authed(request(api.app).put(`/api/core/ipban/${ban.id}`).type('json').send({ type: true }));
    expect(expectSuccess(res, 'Successfully updated the ban!')).toMatchObject({ type: 1, expiry: null });
  });

  it('are accepted by the whitelist create', async () => {
    const ip = uniqueIpv4();
    const entry = expectSuccess(await api.postJson('/api/core/ipwhitelist', { ip, description: 'json', event_user: 0, event_operator: true }), 'Successfully created new whitelisted ip!');
    expect(entry).toMatchObject({ ip, description: 'json', event_user: 0, event_operator: 1, event_api: 1 });
  });

  it('are accepted by the spam rule create', async () => {
    const text = unique('json rule');
    const rule = expectSuccess(await api.postJson('/api/core/spamrule', { text, type: 1, event_message: false, event_comment: 1 }), 'Successfully created new spam rule!');
    expect(rule).toMatchObject({ text, type: 1, event_message: 0, event_comment: 1 });
  });

  it('are validated like forms', async () => {
    expectError(await api.postJson('/api/core/spamrule', { type: 0 }), 422, 'The text field is required.');
    expectError(await api.postJson('/api/core/ipban', { ip: 'nope', type: 1 }), 422, 'The ip must be a valid IP address.');
    expectError(await api.postJson('/api/core/ipwhitelist', { ip: uniqueIpv4(), event_api: 'yes' }), 422, 'The event api field must be true or false.');
    expectError(await api.postJson('/api/core/ipwhitelist', { ip: uniqueIpv4(), event_api: null }), 422, 'The event api field must be true or false.');
  });

  it('read a __proto__ key as an unknown field, as forms do (its fields are not the body\'s)', async () => {
    const name = unique('viaproto');
    const raw = (body: string) => authed(request(api.server).post('/api/ticket/tag').set('Content-Type', 'application/json').send(body));
    expectError(await raw(JSON.stringify({ ['__proto__']: { name } }).replace('"__proto__"', '"__proto__"')), 422, 'The name field is required.');
    expectError(await raw(`{"__proto__":{"name":"${name}"}}`), 422, 'The name field is required.');
    expectError(await authed(request(api.server).post('/api/ticket/tag').type('form').send(`__proto__[name]=${name}`)), 422, 'The name field is required.');
    const kept = expectSuccess(await raw(`{"name":"${name}","__proto__":{"name":"other"}}`), 'Successfully created new tag!');
    expect(kept.name).toBe(name);
  });

  it('refuse text that is no valid Unicode (a lone surrogate), naming the field, and write nothing', async () => {
    const name = unique('lone');
    const raw = (body: string) => authed(request(api.server).post('/api/ticket/tag').set('Content-Type', 'application/json').send(body));
    expectError(await raw(`{"name":"${name}\\ud800x"}`), 422, 'The name must be valid Unicode text.');
    expectError(await raw(`{"name":"${name}","translations":{"\\udfff":"x"}}`), 422, 'The translations.\ufffd must be valid Unicode text.');
    expect(expectList(await api.get('/api/ticket/tag', { limit: 1000 })).some((t) => String(t.name).startsWith(name))).toBe(false);
    // A pair is one character, and fine.
    expect(expectSuccess(await raw(`{"name":"${name}\\ud83d\\ude00"}`), 'Successfully created new tag!').name).toBe(`${name}\u{1F600}`);
  });
});

describe('form bodies', () => {
  // Sent as the bytes given (superagent would serialise a Buffer with qs, as an object).
  const form = (body: string | Buffer, type = 'application/x-www-form-urlencoded') =>
    authed(request(api.server).post('/api/ticket/tag').set('Content-Type', type).serialize((b: unknown) => b as string).send(body as unknown as string));

  it('refuse a percent-escape that is no UTF-8 text, or bytes that are no UTF-8, instead of storing other text', async () => {
    const name = unique('esc');
    for (const body of [`name=${name}%FF%FE`, `name=${name}100%25%ZZ`, `name=${name}%ED%A0%80`]) {
      expectError(await form(body), 400, 'The request body is not valid form encoding: a percent-escape is not UTF-8 text.');
    }
    expectError(await form(Buffer.concat([Buffer.from(`name=${name}`), Buffer.from([0xff, 0xfe])])), 400, 'The request body is not valid UTF-8 text.');
    expect(expectList(await api.get('/api/ticket/tag', { limit: 1000 })).some((t) => String(t.name).startsWith(name))).toBe(false);
    // Valid escapes and a Latin-1 body (its charset says so) read as sent.
    expect(expectSuccess(await form(`name=${name}%C3%A9+100%25`), 'Successfully created new tag!').name).toBe(`${name}é 100%`);
    expect(expectSuccess(await form(Buffer.from(`name=${name}l%E9`, 'latin1'), 'application/x-www-form-urlencoded; charset=iso-8859-1'), 'Successfully created new tag!').name).toBe(`${name}lé`);
  });
});

describe('booleans', () => {
  const truthy: unknown[] = [1, '1', 'true', true];
  const falsy: unknown[] = [0, '0', 'false', false];

  it.each(truthy.map((v) => [JSON.stringify(v), v]))('read %s as 1 in a JSON body', async (_label, value) => {
    const entry = expectSuccess(await api.postJson('/api/core/ipwhitelist', { ip: uniqueIpv4(), event_user: value, event_operator: value, event_api: value }), 'Successfully created new whitelisted ip!');
    expect(entry).toMatchObject({ event_user: 1, event_operator: 1, event_api: 1 });
  });

  it.each(falsy.map((v) => [JSON.stringify(v), v]))('read %s as 0 in a JSON body', async (_label, value) => {
    const entry = expectSuccess(await api.postJson('/api/core/ipwhitelist', { ip: uniqueIpv4(), event_user: value, event_operator: value, event_api: value }), 'Successfully created new whitelisted ip!');
    expect(entry).toMatchObject({ event_user: 0, event_operator: 0, event_api: 0 });
  });

  it.each([['1', 1], ['true', 1], ['0', 0], ['false', 0]])('read the form value %s as %i', async (value, expected) => {
    const rule = expectSuccess(await api.post('/api/core/spamrule', { text: unique('flag'), type: 0, event_message: value, event_comment: value }), 'Successfully created new spam rule!');
    expect(rule).toMatchObject({ event_message: expected, event_comment: expected });
    const entry = expectSuccess(await api.post('/api/core/ipwhitelist', { ip: uniqueIpv4(), event_user: value }), 'Successfully created new whitelisted ip!');
    expect(entry.event_user).toBe(expected);
  });

  it.each(['yes', 'no', '2', 'on', ''])('refuse the form value %j', async (value) => {
    expectError(await api.post('/api/core/ipwhitelist', { ip: uniqueIpv4(), event_operator: value }), 422, 'The event operator field must be true or false.');
  });

  it('filter lists with true/false as with 1/0', async () => {
    const byNumber = expectList(await api.get('/api/core/language', { enabled: 1, limit: 1000 })).map((l) => l.id);
    const byWord = expectList(await api.get('/api/core/language', { enabled: 'true', limit: 1000 })).map((l) => l.id);
    expect(byWord).toEqual(byNumber);
    expect(byNumber.length).toBeGreaterThan(0);
  });
});

describe('request ids', () => {
  it('every response carries X-Request-Id: the caller\'s when it is sane, a fresh one otherwise', async () => {
    const own = await request(api.app).get('/api/core/brand').auth(api.token, 'x').set('X-Request-Id', 'trace-42.a:b');
    expect(own.headers['x-request-id']).toBe('trace-42.a:b');
    const fresh = await request(api.app).get('/api/core/brand').auth(api.token, 'x');
    expect(fresh.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const odd = await request(api.app).get('/api/nowhere').set('X-Request-Id', 'no spaces <or> angle brackets');
    expect(odd.status).toBe(401); // on error responses too
    expect(odd.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('compressed bodies', () => {
  // serialize: superagent would otherwise encode a Buffer as a form or as JSON, not send its bytes.
  const post = (encoding: string, type: string, body: Buffer) =>
    authed(request(api.app).post('/api/core/spamrule').set('Content-Encoding', encoding).set('Content-Type', type).serialize((b) => b).send(body));
  const UNDECODABLE = 'The request body could not be decoded: it is not valid for its Content-Encoding.';

  it('are read when they are what their Content-Encoding says', async () => {
    const text = unique('gzipped');
    expectSuccess(await post('gzip', 'application/x-www-form-urlencoded', gzipSync(`text=${text}&type=0`)), 'Successfully created new spam rule!');
    expectSuccess(await post('deflate', 'application/json', deflateSync(JSON.stringify({ text: `${text}j`, type: 0 }))), 'Successfully created new spam rule!');
  });

  it.each([
    ['gzip', 'garbage', () => Buffer.from('this is not gzip at all')],
    ['gzip', 'truncated', () => gzipSync('text=abc&type=0').subarray(0, 12)],
    ['deflate', 'garbage', () => Buffer.from('nor deflate')],
    ['br', 'garbage', () => Buffer.from('nor brotli, really')],
  ])('answer a %s body that is %s with 400 in the envelope, logging no error', async (encoding, _what, body) => {
    const errors = jest.spyOn(logger, 'error');
    try {
      for (const type of ['application/x-www-form-urlencoded', 'application/json']) {
        const res = await post(encoding, type, body());
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expectError(res, 400, UNDECODABLE);
      }
      expect(errors).not.toHaveBeenCalled();
    } finally {
      errors.mockRestore();
    }
  });
});

describe('parameter limits (20000 per form body or query string)', () => {
  const params = (n: number, first: string) => [first, ...Array.from({ length: n - 1 }, (_, i) => `p${i}=1`)].join('&');

  it('takes a form body of exactly 20000 parameters', async () => {
    const text = unique('many');
    const res = await authed(request(api.app).post('/api/core/spamrule').type('form').send(`type=0&${params(19999, `text=${text}`)}`));
    expect(expectSuccess(res, 'Successfully created new spam rule!').text).toBe(text);
  });

  it('answers a form body of 20001 parameters with 413 instead of dropping the rest', async () => {
    const text = unique('toomany');
    // The required field comes last: qs would have dropped it, and the answer been a 422.
    const res = await authed(request(api.app).post('/api/core/spamrule').type('form').send(`${params(20000, `text=${text}`)}&type=0`));
    expectError(res, 413, 'The request body has more than 20000 parameters.');
    expect(expectList(await api.get('/api/core/spamrule', { limit: 1000 })).filter((r) => r.text === text)).toEqual([]);
  });

  it('takes a query string of 20000 parameters and answers 20001 with 414', async () => {
    // Node refuses request heads over 16 KB (431) before the app sees them; a server that takes
    // longer ones shows what the app itself does, should a proxy or NODE_OPTIONS allow them.
    const server = createServer({ maxHeaderSize: 1 << 20 }, api.app);
    try {
      const ok = await authed(request(server).get(`/api/core/ipban?${params(20000, 'limit=1')}`));
      expect(expectList(ok).length).toBeLessThanOrEqual(1);
      const res = await authed(request(server).get(`/api/core/ipban?${params(20001, 'limit=1')}`));
      expectError(res, 414, 'The query string has more than 20000 parameters.');
      expectError(await request(server).get(`/nowhere?${params(20001, 'a=1')}`), 414, 'The query string has more than 20000 parameters.');
    } finally {
      server.close();
    }
  });
});

describe('response headers', () => {
  const responses = async () => {
    const banned = uniqueIpv4();
    expectSuccess(await api.post('/api/core/ipban', { ip: banned, type: 1 }), 'Successfully created new ban!');
    return {
      'API 200': await api.get('/api/core/brand/1'),
      'API list': await api.get('/api/core/ipban', { limit: 1 }),
      'API 401': await request(api.app).get('/api/core/brand/1'),
      'API 403': await request(api.app).get('/api/core/brand/1').set('X-Forwarded-For', banned),
      'API 404': await api.get('/api/core/nothing'),
      'API 405': await authed(request(api.app).patch('/api/core/brand/1')),
      'API 422': await api.post('/api/core/spamrule', {}),
      'API 400': await authed(request(api.app).post('/api/core/spamrule').type('json').send('{')),
      'account 404': await request(api.app).get('/account/verify/nothing-like-a-token'),
      'account unknown route': await request(api.app).post('/account/nowhere'),
    };
  };

  it('never include X-Powered-By, and are never stored by a cache under /api and /account', async () => {
    const all = { ...(await responses()), health: await request(api.app).get('/health'), 'other 404': await request(api.app).get('/nowhere') };
    for (const [name, res] of Object.entries(all)) {
      expect({ name, poweredBy: res.headers['x-powered-by'], nosniff: res.headers['x-content-type-options'] }).toEqual({ name, poweredBy: undefined, nosniff: 'nosniff' });
      if (name.startsWith('API') || name.startsWith('account')) expect({ name, cache: res.headers['cache-control'] }).toEqual({ name, cache: 'no-store' });
    }
  });
});

describe('one-line filters', () => {
  it('refuse control characters, as one-line fields do', async () => {
    expectError(await api.get('/api/ticket/ticket', { number: 'a\u0000' }), 422, 'The number must not contain control characters.');
    expectError(await api.get('/api/ticket/ticket', { user_email: 'a\u0000@example.com' }), 422, 'The user email must not contain control characters.');
    expectError(await api.get('/api/selfservice/article/search', { term: 'a\u0007' }), 422, 'The term must not contain control characters.');
  });
});
