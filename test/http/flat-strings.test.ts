import { Department } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { newEmail, useApi } from '../helpers/app';
import { expectList, expectSuccess } from '../helpers/envelope';
import { isFlatString } from '../helpers/v8Shape';
import { factories } from '../selfservice/support';

const api = useApi();
const make = factories(api);

/** The paths of the strings in `value` that V8 holds as ropes (cons strings). */
function ropes(value: unknown, path = '', out: string[] = []): string[] {
  if (typeof value === 'string') {
    if (!isFlatString(value)) out.push(path);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => ropes(v, `${path}[${i}]`, out));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) ropes(v, `${path}.${k}`, out);
  }
  return out;
}

// A string built by a template literal or `+` is a rope, and one rope in a body takes
// JSON.stringify off its fast path for all of it (src/lib/flatString.ts): a page of 50 tickets
// serialised in about three times the time. The bodies are looked at as the response hands them
// to JSON.stringify, before it flattens anything.
describe('response bodies hold flat strings', () => {
  it('presents the URLs of tickets and articles (list, show, create, export) as flat strings', async () => {
    const bodies: Array<{ ropes: string[] }> = [];
    const stringify = JSON.stringify;
    const spy = jest.spyOn(JSON, 'stringify').mockImplementation(function (this: unknown, value: unknown, ...rest: unknown[]) {
      if (value && typeof value === 'object' && 'status' in value) bodies.push({ ropes: ropes(value) });
      return (stringify as (...args: unknown[]) => string)(value, ...rest);
    });
    try {
      const department = (await Department.findOne({ where: { name: 'General Enquiries' } }))!.id;
      const ticket = expectSuccess(await api.post('/api/ticket/ticket', {
        department, status: 1, priority: 1, user_email: newEmail('flat'), subject: 'A subject long enough', text: 'Hello',
        send_user_email: 0, send_operators_email: 0,
      }), 'Successfully created new ticket!');
      const shown = expectSuccess(await api.get(`/api/ticket/ticket/${ticket.id}`));
      expect(shown.frontend_url).toMatch(/\/tickets\/view\/.+\?token=/);
      expect(shown.operator_url).toMatch(new RegExp(`/ticket/view/${ticket.id}$`));
      expect(expectList(await api.get('/api/ticket/ticket', { limit: 5, order_direction: 'desc' })).length).toBeGreaterThan(0);
      // The export holds back the last seconds' changes: the ticket changed ten minutes ago.
      await sequelize().query('UPDATE tickets SET updated_at = updated_at - 600 WHERE id = ?', { replacements: [ticket.id] });
      const exported = expectSuccess(await api.get('/api/export/tickets', { start_time: ticket.updated_at - 600, limit: 5 }));
      expect(exported.records.map((r: { id: number }) => r.id)).toContain(ticket.id);
      const article = await make.article();
      expect(article.frontend_url).toMatch(new RegExp(`/article/${article.id}/`));
      expectSuccess(await api.get(`/api/selfservice/article/${article.id}`));
      expectList(await api.get('/api/selfservice/article', { limit: 5 }));
    } finally {
      spy.mockRestore();
    }
    expect(bodies.length).toBeGreaterThanOrEqual(8);
    expect(bodies.flatMap((b) => b.ropes)).toEqual([]);
  });
});
