import { Setting, TicketStatus, Translation } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { statusInUse } from '../../src/ticket/status';
import { useApi, unique } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/ticket/status';
const STATUS_KEYS = ['id', 'name', 'colour', 'auto_close', 'order', 'created_at', 'updated_at', 'translations'];

const keysOf = (o: object) => Object.keys(o).sort();
const setting = async (name: string) => Number((await Setting.findOne({ where: { scope: 'ticket', name } }))!.value);

async function createStatus(body: Record<string, unknown> = {}): Promise<any> {
  return expectSuccess(await api.post(BASE, { name: unique('Status'), ...body }), 'Successfully created new status!');
}

describe('GET /api/ticket/status', () => {
  it('lists the statuses an install ships with, in order', async () => {
    const data = expectList(await api.get(BASE, { order_column: 'order', limit: 1000 }));
    const seeded = ['Open', 'In Progress', 'Awaiting Reply', 'Resolved'].map((name) => data.find((s) => s.name === name));
    expect(seeded.every(Boolean)).toBe(true);
    for (const s of seeded) expect(keysOf(s)).toEqual([...STATUS_KEYS].sort());
    expect(seeded.map((s) => s.auto_close)).toEqual([0, 0, 1, 0]);
    expect(seeded.map((s) => s.order)).toEqual([1, 2, 3, 4]);
    expect(seeded[0]).toMatchObject({ colour: '#35a600', translations: [] });
  });

  it('pages with count and sorts by a sortable column', async () => {
    const a = await createStatus({ name: `zz ${unique()}`, order: 900 });
    const b = await createStatus({ name: `zz ${unique()}`, order: 901 });
    const res = await api.get(BASE, { order_column: 'order', order_direction: 'desc', limit: 2 });
    const data = expectList(res);
    expect(data.map((s) => s.id)).toEqual([b.id, a.id]);
    expect(res.body.count).toBe(await TicketStatus.count());
    const page2 = expectList(await api.get(BASE, { order_column: 'order', order_direction: 'desc', limit: 1, start: 2 }));
    expect(page2.map((s) => s.id)).toEqual([a.id]);
    expectError(await api.get(BASE, { order_column: 'colour' }), 422, 'The selected order column is invalid.');
  });
});

describe('POST /api/ticket/status', () => {
  it('creates a status with the defaults: colour #ffffff, auto_close 0, order after the last', async () => {
    const before = (await TicketStatus.max('order')) as number;
    const name = unique('Pending');
    const data = expectSuccess(await api.post(BASE, { name }), 'Successfully created new status!');
    expect(keysOf(data)).toEqual([...STATUS_KEYS].sort());
    expect(data).toMatchObject({ name, colour: '#ffffff', auto_close: 0, order: before + 1, translations: [] });
    expect(Number.isInteger(data.id)).toBe(true);
    expect(Number.isInteger(data.created_at)).toBe(true);
  });

  it('takes colour, auto_close and order (form or JSON)', async () => {
    expect(await createStatus({ colour: '#1a2b3c', auto_close: 1, order: 7 })).toMatchObject({ colour: '#1a2b3c', auto_close: 1, order: 7 });
    const json = expectSuccess(await api.postJson(BASE, { name: unique('J'), colour: '#ABC', auto_close: true }), 'Successfully created new status!');
    expect(json).toMatchObject({ colour: '#ABC', auto_close: 1 });
  });

  it.each([
    [{}, 'The name field is required.'],
    [{ name: '  ' }, 'The name field is required.'],
    [{ name: 'x'.repeat(256) }, 'The name may not be greater than 255 characters.'],
    [{ name: 'x', colour: 'red' }, 'The colour format is invalid.'],
    [{ name: 'x', colour: '#12345' }, 'The colour format is invalid.'],
    [{ name: 'x', auto_close: 'maybe' }, 'The auto close field must be true or false.'],
    [{ name: 'x', order: 'first' }, 'The order must be an integer.'],
    [{ name: 'x', 'colour:fr': 'x' }, 'The colour:fr field is not translatable.'],
  ] as Array<[Record<string, unknown>, string]>)('422 %j', async (body, message) => {
    const count = await TicketStatus.count();
    expectError(await api.post(BASE, body), 422, message);
    expect(await TicketStatus.count()).toBe(count);
  });
});

describe('GET /api/ticket/status/{id}', () => {
  it('shows a status', async () => {
    const created = await createStatus({ colour: '#010203' });
    expect(expectSuccess(await api.get(`${BASE}/${created.id}`))).toEqual(created);
  });

  it.each(['999999', 'abc', '0'])('404 for %s', async (id) => {
    expectNotFound(await api.get(`${BASE}/${id}`), 'status');
  });
});

describe('PUT /api/ticket/status/{id}', () => {
  it('updates name, colour, auto_close and order', async () => {
    const created = await createStatus();
    const name = unique('Renamed');
    const data = expectSuccess(await api.put(`${BASE}/${created.id}`, { name, colour: '#abcdef', auto_close: 1, order: 3 }), 'Successfully updated the status!');
    expect(data).toMatchObject({ id: created.id, name, colour: '#abcdef', auto_close: 1, order: 3 });
    expect(expectSuccess(await api.get(`${BASE}/${created.id}`))).toEqual(data);
  });

  it('keeps what is not sent', async () => {
    const created = await createStatus({ colour: '#111111', auto_close: 1, order: 5 });
    const data = expectSuccess(await api.putJson(`${BASE}/${created.id}`, { name: 'Same' }), 'Successfully updated the status!');
    expect(data).toMatchObject({ name: 'Same', colour: '#111111', auto_close: 1, order: 5 });
  });

  it('requires the name (the spec: name R on update)', async () => {
    const created = await createStatus();
    expectError(await api.put(`${BASE}/${created.id}`, { colour: '#abcdef' }), 422, 'The name field is required.');
    expectError(await api.put(`${BASE}/${created.id}`, { name: 'x', colour: 'blue' }), 422, 'The colour format is invalid.');
    expect(expectSuccess(await api.get(`${BASE}/${created.id}`))).toEqual(created);
  });

  it('404 before 422', async () => {
    expectNotFound(await api.put(`${BASE}/999999`, {}), 'status');
  });
});

describe('translations', () => {
  it('are taken on create, shown as a translations array, and replace the name with lang', async () => {
    const data = await createStatus({ name: 'Open-ish', 'name:fr': 'Ouvert', 'name:de': 'Offen' });
    expect(data.translations).toEqual([
      { status_id: data.id, name: 'Offen', locale: 'de' },
      { status_id: data.id, name: 'Ouvert', locale: 'fr' },
    ]);
    const fr = expectSuccess(await api.get(`${BASE}/${data.id}`, { lang: 'fr' }));
    expect(fr.name).toBe('Ouvert');
    expect(fr.translations).toBeUndefined();
    const es = expectSuccess(await api.get(`${BASE}/${data.id}`, { lang: 'es' }));
    expect(es.name).toBe('Open-ish');
    expect(es.translations).toHaveLength(2);
    const listed = expectList(await api.get(BASE, { lang: 'de', limit: 1000 })).find((s) => s.id === data.id);
    expect(listed.name).toBe('Offen');
  });

  it('an update carrying one translation deletes the others; one carrying none keeps them', async () => {
    const data = await createStatus({ 'name:fr': 'Ouvert', 'name:de': 'Offen' });
    const kept = expectSuccess(await api.put(`${BASE}/${data.id}`, { name: data.name, colour: '#000000' }), 'Successfully updated the status!');
    expect(kept.translations).toHaveLength(2);
    const replaced = expectSuccess(await api.put(`${BASE}/${data.id}`, { name: data.name, 'name:es': 'Abierto' }), 'Successfully updated the status!');
    expect(replaced.translations).toEqual([{ status_id: data.id, name: 'Abierto', locale: 'es' }]);
    expect(await Translation.count({ where: { record_type: 'ticket_status', record_id: data.id } })).toBe(1);
  });

  it('are refused in a locale whose language is no ISO 639-1 code, and taken with a region or script', async () => {
    const count = await TicketStatus.count();
    for (const locale of ['xx', 'zz', 'fil', 'iw', 'xx_GB']) {
      expectError(await api.post(BASE, { name: unique('S'), [`name:${locale}`]: 'y' }), 422, `The locale of name:${locale} is not a valid ISO-639 code.`);
    }
    expect(await TicketStatus.count()).toBe(count);
    const data = await createStatus({ 'name:pt_BR': 'Aberto', 'name:zh-Hant': '開', 'name:yo': 'Ṣí' });
    expect(data.translations.map((t: any) => t.locale).sort()).toEqual(['pt_BR', 'yo', 'zh_Hant']);
  });
});

describe('DELETE /api/ticket/status/{id}', () => {
  it('deletes a status and its translations', async () => {
    const created = await createStatus({ 'name:fr': 'x' });
    expectDeleted(await api.del(`${BASE}/${created.id}`), 'status');
    expectNotFound(await api.get(`${BASE}/${created.id}`), 'status');
    expectNotFound(await api.del(`${BASE}/${created.id}`), 'status');
    expect(await Translation.count({ where: { record_type: 'ticket_status', record_id: created.id } })).toBe(0);
  });

  it('refuses the default open and resolved statuses of the ticket settings', async () => {
    const open = await setting('default_open_status');
    const resolved = await setting('default_resolved_status');
    expectError(await api.del(`${BASE}/${open}`), 422,
      'The status cannot be deleted because it is the default open status in the ticket settings (default_open_status).');
    expectError(await api.del(`${BASE}/${resolved}`), 422,
      'The status cannot be deleted because it is the default resolved status in the ticket settings (default_resolved_status).');
    expect(await TicketStatus.count({ where: { id: [open, resolved] } })).toBe(2);
  });

  it('statusInUse names the reason, or null', async () => {
    const created = await createStatus();
    const open = await setting('default_open_status');
    await sequelize().transaction(async (t) => {
      expect(await statusInUse(created.id, t)).toBeNull();
      expect(await statusInUse(open, t)).toMatch(/default open status/);
    });
  });
});
