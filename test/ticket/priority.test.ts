import { Department, PriorityDepartment, TicketPriority, Translation } from '../../src/db/models';
import { countQueries } from '../../src/db/sequelize';
import { useApi, unique } from '../helpers/app';
import { expectDeleted, expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/ticket/priority';
const PRIORITY_KEYS = ['id', 'name', 'colour', 'order', 'created_at', 'updated_at', 'translations'];

const keysOf = (o: object) => Object.keys(o).sort();
const ids = (data: any[]) => data.map((d) => d.id);
const deptsOf = async (priorityId: number) =>
  (await PriorityDepartment.findAll({ where: { priority_id: priorityId }, order: [['department_id', 'ASC']] })).map((p) => p.department_id);

async function createPriority(body: Record<string, unknown> = {}): Promise<any> {
  return expectSuccess(await api.post(BASE, { name: unique('Prio'), ...body }), 'Successfully created new priority!');
}

let d1: Department;
let d2: Department;
beforeAll(async () => {
  d1 = await Department.create({ name: unique('Sales') });
  d2 = await Department.create({ name: unique('Billing') });
});

describe('GET /api/ticket/priority', () => {
  it('lists the priorities an install ships with', async () => {
    const data = expectList(await api.get(BASE, { order_column: 'order', limit: 1000 }));
    const seeded = ['Low', 'Medium', 'High', 'Urgent'].map((name) => data.find((p) => p.name === name));
    expect(seeded.every(Boolean)).toBe(true);
    for (const p of seeded) expect(keysOf(p)).toEqual([...PRIORITY_KEYS].sort());
    expect(seeded.map((p) => p.order)).toEqual([1, 2, 3, 4]);
  });

  describe('department_id', () => {
    let inD1: any;
    let inD2: any;
    let inBoth: any;
    let everywhere: any;
    beforeAll(async () => {
      inD1 = await createPriority({ depts: [d1.id] });
      inD2 = await createPriority({ depts: [d2.id] });
      inBoth = await createPriority({ depts: [d1.id, d2.id] });
      everywhere = await createPriority();
    });

    it('lists the priorities of the department and those of every department (no depts)', async () => {
      const res = await api.get(BASE, { department_id: d1.id, limit: 1000 });
      const found = ids(expectList(res));
      expect(found).toEqual(expect.arrayContaining([inD1.id, inBoth.id, everywhere.id]));
      expect(found).not.toContain(inD2.id);
      expect(res.body.count).toBe(found.length);
      const unlinked = await TicketPriority.count() - (await PriorityDepartment.aggregate('priority_id', 'count', { distinct: true }) as number);
      expect(found.length).toBe(unlinked + 2);
    });

    it('is one query for the list and one for the count', async () => {
      const { queries } = await countQueries(() => api.get(BASE, { department_id: d2.id }));
      expect(queries.filter((q) => /priority_departments/.test(q))).toHaveLength(2);
    });

    it('422 for a value that is not an id; a department that does not exist offers nothing', async () => {
      expectError(await api.get(BASE, { department_id: 'x' }), 422, 'The department id must be an integer.');
      const res = await api.get(BASE, { department_id: 4294967295 });
      expect({ data: expectList(res), count: res.body.count }).toEqual({ data: [], count: 0 });
    });
  });
});

describe('POST /api/ticket/priority', () => {
  it('creates a priority with colour #ffffff and order after the last', async () => {
    const before = (await TicketPriority.max('order')) as number;
    const name = unique('Critical');
    const data = expectSuccess(await api.post(BASE, { name }), 'Successfully created new priority!');
    expect(keysOf(data)).toEqual([...PRIORITY_KEYS].sort());
    expect(data).toMatchObject({ name, colour: '#ffffff', order: before + 1, translations: [] });
    expect(await deptsOf(data.id)).toEqual([]);
  });

  it('gives parallel creates without order each its own place after the last', async () => {
    const before = (await TicketPriority.max('order')) as number;
    const made = await Promise.all(Array.from({ length: 6 }, () => api.post(BASE, { name: unique('Parallel') })));
    const orders = made.map((res) => expectSuccess(res, 'Successfully created new priority!').order as number);
    expect(orders.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6].map((i) => before + i));
  });

  it('links the departments of depts (form or JSON)', async () => {
    const form = await createPriority({ colour: '#2b3c4d', depts: [d2.id, d1.id] });
    expect(form.colour).toBe('#2b3c4d');
    expect(await deptsOf(form.id)).toEqual([d1.id, d2.id].sort((a, b) => a - b));
    const json = expectSuccess(await api.postJson(BASE, { name: unique('J'), depts: [d1.id, d1.id] }), 'Successfully created new priority!');
    expect(await deptsOf(json.id)).toEqual([d1.id]);
  });

  it.each([
    [{}, 'The name field is required.'],
    [{ name: 'x', colour: 'orange' }, 'The colour format is invalid.'],
    [{ name: 'x', depts: ['a'] }, 'The depts.0 must be an integer.'],
  ] as Array<[Record<string, unknown>, string]>)('422 %j', async (body, message) => {
    expectError(await api.post(BASE, body), 422, message);
  });

  it('422 for a department that does not exist, and nothing is created', async () => {
    const count = await TicketPriority.count();
    expectError(await api.post(BASE, { name: 'x', depts: [999999] }), 422, 'The selected depts.0 is invalid.');
    expectError(await api.post(BASE, { name: 'x', depts: [d1.id, 999999] }), 422, 'The selected depts.1 is invalid.');
    expect(await TicketPriority.count()).toBe(count);
  });
});

describe('GET /api/ticket/priority/{id}', () => {
  it('shows a priority', async () => {
    const created = await createPriority({ depts: [d1.id] });
    expect(expectSuccess(await api.get(`${BASE}/${created.id}`))).toEqual(created);
  });

  it('404', async () => {
    expectNotFound(await api.get(`${BASE}/999999`), 'priority');
  });
});

describe('PUT /api/ticket/priority/{id}', () => {
  it('changes only what is sent (every field optional)', async () => {
    const created = await createPriority({ colour: '#123456', depts: [d1.id] });
    const data = expectSuccess(await api.put(`${BASE}/${created.id}`, { colour: '#654321' }), 'Successfully updated the priority!');
    expect(data).toMatchObject({ name: created.name, colour: '#654321', order: created.order });
    expect(await deptsOf(created.id)).toEqual([d1.id]);
    expect(expectSuccess(await api.put(`${BASE}/${created.id}`, {}), 'Successfully updated the priority!')).toMatchObject({ colour: '#654321' });
  });

  it('replaces the departments; an empty depts clears them', async () => {
    const created = await createPriority({ depts: [d1.id] });
    expectSuccess(await api.put(`${BASE}/${created.id}`, { depts: [d2.id] }), 'Successfully updated the priority!');
    expect(await deptsOf(created.id)).toEqual([d2.id]);
    expectSuccess(await api.put(`${BASE}/${created.id}`, { depts: '' }), 'Successfully updated the priority!');
    expect(await deptsOf(created.id)).toEqual([]);
  });

  it('404 and 422', async () => {
    expectNotFound(await api.put(`${BASE}/999999`, { name: 'x' }), 'priority');
    const created = await createPriority({ depts: [d1.id] });
    expectError(await api.put(`${BASE}/${created.id}`, { depts: [d2.id, 999999] }), 422, 'The selected depts.1 is invalid.');
    expectError(await api.put(`${BASE}/${created.id}`, { name: '' }), 422, 'The name field is required.');
    expect(await deptsOf(created.id)).toEqual([d1.id]);
  });
});

describe('translations', () => {
  it('lang replaces the name; an update with a translation replaces the stored ones', async () => {
    const data = await createPriority({ name: 'Urgent-ish', 'name:fr': 'Urgent FR', 'name:de': 'Dringend' });
    expect(data.translations).toEqual([
      { priority_id: data.id, name: 'Dringend', locale: 'de' },
      { priority_id: data.id, name: 'Urgent FR', locale: 'fr' },
    ]);
    expect(expectSuccess(await api.get(`${BASE}/${data.id}`, { lang: 'de' })).name).toBe('Dringend');
    const updated = expectSuccess(await api.put(`${BASE}/${data.id}`, { 'name:it': 'Urgente' }), 'Successfully updated the priority!');
    expect(updated.translations).toEqual([{ priority_id: data.id, name: 'Urgente', locale: 'it' }]);
  });
});

describe('DELETE /api/ticket/priority/{id}', () => {
  it('refuses a priority that tickets have, naming why', async () => {
    const created = await createPriority({});
    const ticket = expectSuccess(await api.post('/api/ticket/ticket', {
      department: (await Department.findOne({ where: { name: 'General Enquiries' } }))!.id, status: 1, priority: created.id, user_email: `${unique('u')}@example.com`, subject: 'S', text: 'T', send_user_email: 0, send_operators_email: 0,
    }), 'Successfully created new ticket!');
    expectError(await api.del(`${BASE}/${created.id}`), 422, 'The priority cannot be deleted because tickets have it: give them another priority first.');
    expect(expectSuccess(await api.get(`/api/ticket/ticket/${ticket.id}`)).priority_id).toBe(created.id);
  });

  it('deletes a priority with its department links and translations', async () => {
    const created = await createPriority({ depts: [d1.id], 'name:fr': 'x' });
    expectDeleted(await api.del(`${BASE}/${created.id}`), 'priority');
    expectNotFound(await api.get(`${BASE}/${created.id}`), 'priority');
    expect(await deptsOf(created.id)).toEqual([]);
    expect(await Translation.count({ where: { record_type: 'ticket_priority', record_id: created.id } })).toBe(0);
  });
});
