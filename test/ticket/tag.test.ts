import request from 'supertest';
import { TicketTag, Translation } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { tagsByName } from '../../src/ticket/tag';
import { useApi, unique } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/ticket/tag';
const TAG_KEYS = ['id', 'name', 'colour', 'created_at', 'updated_at', 'translations'];

const keysOf = (o: object) => Object.keys(o).sort();

async function createTag(body: Record<string, unknown> = {}): Promise<any> {
  return expectSuccess(await api.postJson(BASE, { name: unique('tag'), ...body }), 'Successfully created new tag!');
}

describe('POST /api/ticket/tag', () => {
  it('creates a tag from a JSON body with the default colour #dddddd', async () => {
    const name = unique('billing');
    const data = expectSuccess(await api.postJson(BASE, { name }), 'Successfully created new tag!');
    expect(keysOf(data)).toEqual([...TAG_KEYS].sort());
    expect(data).toMatchObject({ name, colour: '#dddddd', translations: [] });
  });

  it('takes an empty colour as none given: the default on create, unchanged on update (statuses and priorities too)', async () => {
    const tag = expectSuccess(await api.post(BASE, { name: unique('Empty'), colour: '' }), 'Successfully created new tag!');
    expect(tag.colour).toBe('#dddddd');
    expectSuccess(await api.put(`${BASE}/${tag.id}`, { name: tag.name, colour: '#123456' }), 'Successfully updated the tag!');
    expect(expectSuccess(await api.put(`${BASE}/${tag.id}`, { name: tag.name, colour: ' ' }), 'Successfully updated the tag!').colour).toBe('#123456');
    expect(expectSuccess(await api.post('/api/ticket/status', { name: unique('Empty'), colour: '' }), 'Successfully created new status!').colour).toBe('#ffffff');
    expect(expectSuccess(await api.post('/api/ticket/priority', { name: unique('Empty'), colour: '' }), 'Successfully created new priority!').colour).toBe('#ffffff');
    expectError(await api.post(BASE, { name: unique('Bad'), colour: 'red' }), 422, 'The colour format is invalid.');
  });

  it('creates a tag from a form body with a colour', async () => {
    const data = expectSuccess(await api.post(BASE, { name: unique('urgent'), colour: '#3c4d5e' }), 'Successfully created new tag!');
    expect(data.colour).toBe('#3c4d5e');
  });

  it('takes a JSON body sent as application/json; charset=utf-8', async () => {
    const name = unique('Größe');
    const res = await request(api.app).post(BASE).auth(api.token, 'x').set('Content-Type', 'application/json; charset=utf-8').send(JSON.stringify({ name }));
    expect(expectSuccess(res, 'Successfully created new tag!').name).toBe(name);
  });

  it.each([
    [{}, 'The name field is required.'],
    [{ name: '' }, 'The name field is required.'],
    [{ name: 'x', colour: '#ggg' }, 'The colour format is invalid.'],
    [{ name: 5 }, 'The name must be a string.'],
  ] as Array<[Record<string, unknown>, string]>)('422 %j', async (body, message) => {
    expectError(await api.postJson(BASE, body), 422, message);
  });

  it('refuses a name already taken, whatever its case', async () => {
    const tag = await createTag();
    expectError(await api.postJson(BASE, { name: tag.name.toUpperCase() }), 422, 'The name has already been taken.');
    expectError(await api.post(BASE, { name: ` ${tag.name} ` }), 422, 'The name has already been taken.');
    expect(await TicketTag.count({ where: { name: tag.name } })).toBe(1);
  });
});

describe('GET /api/ticket/tag', () => {
  it('lists tags with count, sortable by name', async () => {
    const b = await createTag({ name: `zzzb-${unique()}` });
    const a = await createTag({ name: `zzza-${unique()}` });
    const res = await api.get(BASE, { order_column: 'name', order_direction: 'desc', limit: 1000 });
    const data = expectList(res);
    expect(res.body.count).toBe(await TicketTag.count());
    const at = (id: number) => data.findIndex((t) => t.id === id);
    expect(at(b.id)).toBeLessThan(at(a.id));
    expect(keysOf(data[0])).toEqual([...TAG_KEYS].sort());
  });

  it('shows one tag, 404 for an unknown one', async () => {
    const tag = await createTag({ colour: '#010101' });
    expect(expectSuccess(await api.get(`${BASE}/${tag.id}`))).toEqual(tag);
    expectNotFound(await api.get(`${BASE}/999999`), 'tag');
  });
});

describe('PUT /api/ticket/tag/{id}', () => {
  it('renames and recolours, from a form or a JSON body', async () => {
    const tag = await createTag();
    const name = unique('renamed');
    expect(expectSuccess(await api.put(`${BASE}/${tag.id}`, { name, colour: '#abcabc' }), 'Successfully updated the tag!'))
      .toMatchObject({ id: tag.id, name, colour: '#abcabc' });
    expect(expectSuccess(await api.putJson(`${BASE}/${tag.id}`, { name }), 'Successfully updated the tag!')).toMatchObject({ name, colour: '#abcabc' });
  });

  it('requires the name; refuses the name of another tag', async () => {
    const tag = await createTag();
    const other = await createTag();
    expectError(await api.putJson(`${BASE}/${tag.id}`, { colour: '#000000' }), 422, 'The name field is required.');
    expectError(await api.putJson(`${BASE}/${tag.id}`, { name: other.name }), 422, 'The name has already been taken.');
    expectNotFound(await api.putJson(`${BASE}/999999`, { name: 'x' }), 'tag');
  });

  it('an update with a translation replaces the stored ones', async () => {
    const tag = await createTag({ 'name:fr': 'facturation', 'name:de': 'Rechnung' });
    expect(tag.translations).toEqual([
      { tag_id: tag.id, name: 'Rechnung', locale: 'de' },
      { tag_id: tag.id, name: 'facturation', locale: 'fr' },
    ]);
    expect(expectSuccess(await api.get(`${BASE}/${tag.id}`, { lang: 'fr' })).name).toBe('facturation');
    const data = expectSuccess(await api.putJson(`${BASE}/${tag.id}`, { name: tag.name, 'name:fr': 'factures' }), 'Successfully updated the tag!');
    expect(data.translations).toEqual([{ tag_id: tag.id, name: 'factures', locale: 'fr' }]);
  });
});

describe('DELETE /api/ticket/tag/{id}', () => {
  it('deletes a tag and its translations', async () => {
    const tag = await createTag({ 'name:fr': 'x' });
    expectDeleted(await api.del(`${BASE}/${tag.id}`), 'tag');
    expectNotFound(await api.get(`${BASE}/${tag.id}`), 'tag');
    expect(await Translation.count({ where: { record_type: 'ticket_tag', record_id: tag.id } })).toBe(0);
  });
});

describe('tagsByName', () => {
  it('finds tags case-insensitively, creates the missing ones once, in the order given', async () => {
    const existing = await createTag();
    const fresh = unique('Fresh');
    const tags = await sequelize().transaction((t) => tagsByName([fresh, existing.name.toUpperCase(), ` ${fresh.toLowerCase()} `, ''], t));
    expect(tags.map((t) => t.name)).toEqual([fresh, existing.name]);
    expect(tags[0].colour).toBe('#dddddd');
    const again = await sequelize().transaction((t) => tagsByName([fresh], t));
    expect(again[0].id).toBe(tags[0].id);
  });

  it('names that differ only by accents are one tag, as the unique index has it', async () => {
    const base = unique('resume');
    const accented = base.replace('resume', 'résumé');
    const tags = await sequelize().transaction((t) => tagsByName([base, accented], t));
    expect(tags).toHaveLength(1);
    const again = await sequelize().transaction((t) => tagsByName([accented], t));
    expect(again.map((t) => t.id)).toEqual([tags[0].id]);
  });

  it('two requests creating the same tag at once end with one tag', async () => {
    const name = unique('race');
    const [a, b] = await Promise.all([1, 2].map(() => sequelize().transaction((t) => tagsByName([name], t))));
    expect(a[0].id).toBe(b[0].id);
    expect(await TicketTag.count({ where: { name } })).toBe(1);
  });
});
