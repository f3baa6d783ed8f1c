/**
 * The ticket search's cases, run on each engine (ticket-search.test.ts: InnoDB, the default;
 * ticket-search-mroonga.test.ts: Mroonga): the search language on the list's `search` (and the
 * tickets export's): field terms, phrases, exclusions, OR, dates; 422 naming the position of what
 * does not parse; plain words as before; words in messages, drafts left out. Every list but the
 * last is narrowed to this file's brand.
 */
import { Brand, Department, DepartmentBrand, DepartmentEmail, Ticket, TicketPriority, TicketStatus, TicketTag, User } from '../../src/db/models';
import { useApi, newEmail, nowSec, unique } from '../helpers/app';
import { expectError, expectList } from '../helpers/envelope';
import { ids, ticketContext, ticketFactories, type TicketContext } from './ticketSupport';


export function searchCases(): void {
  const api = useApi();
  const BASE = '/api/ticket/ticket';
  let ctx: TicketContext;
  const f = ticketFactories(api, () => ctx);
  let brand: Brand;
  let dept: Department;
  let sub: Department;
  const word = () => Array.from({ length: 12 }, () => 'abcdefghijklmnopqrstuvwxyz'[Math.floor(Math.random() * 26)]).join('');
  const list = async (search: string) => ids(expectList(await api.get(BASE, { brand: brand.id, limit: 200, search })));

  /** Tickets a..e of this file, with what each query below tells apart. */
  let t: Record<'a' | 'b' | 'c' | 'd' | 'e', any>;
  let w: string;
  let tag: TicketTag;
  let op: User;
  let alice: User;
  let inProgress: TicketStatus;
  let high: TicketPriority;

  beforeAll(async () => {
    ctx = await ticketContext();
    brand = await Brand.create({ name: unique('SearchBrand') });
    const department = async (name: string, parentId: number | null = null) => {
      const d = await Department.create({ name, parent_id: parentId });
      await DepartmentBrand.create({ department_id: d.id, brand_id: brand.id });
      await DepartmentEmail.create({ department_id: d.id, brand_id: brand.id, address: newEmail('d') });
      return d;
    };
    dept = await department(unique('Billing'));
    sub = await department(unique('Refunds'), dept.id);
    w = word();
    tag = await TicketTag.create({ name: unique('urgent tag') });
    op = await f.operator({ email: newEmail('searchop') });
    alice = await f.user({ brand_id: brand.id, email: newEmail('alice') });
    inProgress = (await TicketStatus.findByPk(ctx.otherStatus))!;
    // Last by order: the default priority of new tickets (the first offered) stays the seeded one for other files.
    high = (await TicketPriority.create({ name: unique('High'), order: 1000 }))!;
    const other = await f.user({ brand_id: brand.id });
    const ticket = (extra: Record<string, unknown>) => f.ticket({ brand: brand.id, department: dept.id, user: other.id, ...extra });
    t = {
      a: await ticket({ subject: `Printer ${w} paper tray jammed`, user: alice.id, tag: [tag.id], created_at: Date.UTC(2024, 0, 10) / 1000 }),
      b: await ticket({ subject: `Tray of paper ${w}`, status: inProgress.id, assignedto: [op.id], created_at: Date.UTC(2024, 0, 20) / 1000 }),
      c: await ticket({ subject: `Refund ${w} please`, department: sub.id, priority: high.id, created_at: Date.UTC(2024, 1, 1) / 1000 }),
      d: await ticket({ subject: `Something else ${w}`, tag: [tag.id], assignedto: [op.id], created_at: Date.UTC(2024, 1, 1, 12) / 1000 }),
      e: await ticket({ subject: `Unrelated ${word()}` }),
    };
  });

  describe('search language on GET /api/ticket/ticket', () => {
    it('plain words: the FULLTEXT search as before', async () => {
      expect(await list(w)).toEqual([t.a.id, t.b.id, t.c.id, t.d.id]);
      expect(await list(`${w} jammed`)).toEqual([t.a.id]);
      expect(await list(t.c.number)).toEqual([t.c.id]);
    });

    it('a word with underscores is one word, as the engine reads it (ERR_CONNECTION_REFUSED), on every path', async () => {
      const [code, key] = [`ERR_${word()}_REFUSED`, `max_${word()}_size`];
      // Outside this file's brand (its tickets are counted by the other cases): its words are its own.
      const list = async (search: string) => ids(expectList(await api.get(BASE, { limit: 200, search })));
      const u = await f.ticket({ subject: `Browser shows ${code}`, text: `Raise the config key ${key} please` });
      expect(await list(code)).toEqual([u.id]);
      expect(await list(code.toLowerCase())).toEqual([u.id]);
      expect(await list(key)).toEqual([u.id]);
      expect(await list(`"${code}"`)).toEqual([u.id]);
      expect(await list(`"config key ${key}"`)).toEqual([u.id]);
      expect(await list(`${code} -nosuchwordxyz`)).toEqual([u.id]);
      expect(await list(`${key} OR nosuchwordxyz`)).toEqual([u.id]);
      expect(await list(key.slice(0, -2))).toEqual([u.id]);
      expect(await list(`${code} -${key}`)).toEqual([]);
      // A longer word that starts with it is no match.
      expect(await list(`${key}x`)).toEqual([]);
    });

    it('status, priority, department (with the ones below it) by name or id', async () => {
      expect(await list(`${w} status:"${inProgress.name}"`)).toEqual([t.b.id]);
      expect(await list(`${w} status:${inProgress.id}`)).toEqual([t.b.id]);
      expect(await list(`${w} priority:${high.name}`)).toEqual([t.c.id]);
      expect(await list(`${w} priority:${high.id}`)).toEqual([t.c.id]);
      expect(await list(`department:"${dept.name}"`)).toEqual([t.a.id, t.b.id, t.c.id, t.d.id, t.e.id]);
      expect(await list(`department:${sub.id}`)).toEqual([t.c.id]);
      expect(await list(`${w} status:nosuchstatus`)).toEqual([]);
    });

    it('tag, user (id or address), assigned (id, address, none), number', async () => {
      expect(await list(`tag:"${tag.name}"`)).toEqual([t.a.id, t.d.id]);
      expect(await list(`tag:${tag.id} ${w}`)).toEqual([t.a.id, t.d.id]);
      expect(await list(`user:${alice.email}`)).toEqual([t.a.id]);
      expect(await list(`user:${alice.id}`)).toEqual([t.a.id]);
      expect(await list(`assigned:${op.email}`)).toEqual([t.b.id, t.d.id]);
      expect(await list(`assigned:${op.id}`)).toEqual([t.b.id, t.d.id]);
      expect(await list(`${w} assigned:none`)).toEqual([t.a.id, t.c.id]);
      expect(await list(`number:${t.b.number}`)).toEqual([t.b.id]);
    });

    it('created with dates (UTC days) and UNIX seconds', async () => {
      expect(await list(`${w} created<2024-01-20`)).toEqual([t.a.id]);
      expect(await list(`${w} created<=2024-01-20`)).toEqual([t.a.id, t.b.id]);
      expect(await list(`${w} created>2024-01-20`)).toEqual([t.c.id, t.d.id]);
      expect(await list(`${w} created:2024-02-01`)).toEqual([t.c.id, t.d.id]);
      expect(await list(`${w} created>=${Date.UTC(2024, 1, 1, 12) / 1000}`)).toEqual([t.d.id]);
      expect(await list(`${w} created>2024-01-01 created<2024-02-01`)).toEqual([t.a.id, t.b.id]);
    });

    it('"exact phrases", -exclusions and OR', async () => {
      expect(await list(`"paper tray" ${w}`)).toEqual([t.a.id]);
      expect(await list(`${w} paper tray`)).toEqual([t.a.id, t.b.id]);
      expect(await list(`${w} -jammed`)).toEqual([t.b.id, t.c.id, t.d.id]);
      expect(await list(`${w} -tag:"${tag.name}"`)).toEqual([t.b.id, t.c.id]);
      expect(await list(`${w} -"paper tray"`)).toEqual([t.b.id, t.c.id, t.d.id]);
      expect(await list(`${w} priority:${high.id} OR ${w} status:${inProgress.id}`)).toEqual([t.b.id, t.c.id]);
      expect(await list(`user:${alice.id} OR assigned:${op.id}`)).toEqual([t.a.id, t.b.id, t.d.id]);
    });

    it('an exclusion excludes the whole term, also one made of several parts (a day, a second, a list, a subquery)', async () => {
      // A day is two bounds (at or after its start, before its end): all of it is negated.
      expect(await list(`${w} -created:2024-01-20`)).toEqual([t.a.id, t.c.id, t.d.id]);
      expect(await list(`-created:2024-01-20 ${w}`)).toEqual([t.a.id, t.c.id, t.d.id]);
      expect(await list(`${w} -created:2024-02-01`)).toEqual([t.a.id, t.b.id]);
      expect(await list(`${w} -created:2024-01-10 -created:2024-01-20`)).toEqual([t.c.id, t.d.id]);
      // So is a second given in UNIX seconds (at or after it, before the next).
      expect(await list(`${w} -created:${t.b.created_at}`)).toEqual([t.a.id, t.c.id, t.d.id]);
      expect(await list(`${w} -created:${t.d.created_at}`)).toEqual([t.a.id, t.b.id, t.c.id]);
      // One bound each.
      expect(await list(`${w} -created>2024-01-20`)).toEqual([t.a.id, t.b.id]);
      expect(await list(`${w} -created>=2024-01-20`)).toEqual([t.a.id]);
      expect(await list(`${w} -created<2024-01-20`)).toEqual([t.b.id, t.c.id, t.d.id]);
      expect(await list(`${w} -created<=2024-01-20`)).toEqual([t.c.id, t.d.id]);
      // Names and ids looked up in other tables, the department with those below it, the words.
      expect(await list(`${w} -status:"${inProgress.name}"`)).toEqual([t.a.id, t.c.id, t.d.id]);
      expect(await list(`${w} -status:${inProgress.id}`)).toEqual([t.a.id, t.c.id, t.d.id]);
      expect(await list(`${w} -priority:${high.name}`)).toEqual([t.a.id, t.b.id, t.d.id]);
      expect(await list(`${w} -department:${sub.id}`)).toEqual([t.a.id, t.b.id, t.d.id]);
      expect(await list(`${w} -department:"${dept.name}"`)).toEqual([]);
      expect(await list(`${w} -tag:${tag.id}`)).toEqual([t.b.id, t.c.id]);
      expect(await list(`${w} -user:${alice.email}`)).toEqual([t.b.id, t.c.id, t.d.id]);
      expect(await list(`${w} -user:${alice.id}`)).toEqual([t.b.id, t.c.id, t.d.id]);
      expect(await list(`${w} -assigned:${op.email}`)).toEqual([t.a.id, t.c.id]);
      expect(await list(`${w} -assigned:none`)).toEqual([t.b.id, t.d.id]);
      expect(await list(`${w} -number:${t.b.number}`)).toEqual([t.a.id, t.c.id, t.d.id]);
      expect(await list(`${w} -"paper tray" -refund`)).toEqual([t.b.id, t.d.id]);
    });

    it('OR joins whole terms and groups, also those made of several parts, negated or not', async () => {
      expect(await list(`${w} created:2024-01-10 OR ${w} created:2024-02-01`)).toEqual([t.a.id, t.c.id, t.d.id]);
      expect(await list(`created:2024-01-20 ${w} OR ${w} created:2024-01-10`)).toEqual([t.a.id, t.b.id]);
      expect(await list(`${w} -created:2024-02-01 OR ${w} priority:${high.id}`)).toEqual([t.a.id, t.b.id, t.c.id]);
      expect(await list(`${w} -created:2024-01-20 OR ${w} created:2024-01-20`)).toEqual([t.a.id, t.b.id, t.c.id, t.d.id]);
      expect(await list(`${w} -created:2024-02-01 -created:2024-01-10 OR ${w} -department:"${dept.name}"`)).toEqual([t.b.id]);
      expect(await list(`${w} -assigned:none -tag:${tag.id} OR ${w} -user:${alice.id} created<2024-01-20`)).toEqual([t.b.id]);
      // A group of one negated day (no words: this brand's tickets, a..e, then).
      expect(await list(`-created:2024-01-20 OR created:2024-01-10`)).toEqual([t.a.id, t.c.id, t.d.id, t.e.id]);
    });

    it.each([
      ['status:', 'The search is invalid at position 8: status: needs a value.'],
      ['"paper tray', 'The search is invalid at position 1: the quote is not closed.'],
      ['printer OR', 'The search is invalid at position 9: OR needs a term after it.'],
      ['created>yesterday', "The search is invalid at position 1: created takes a date (YYYY-MM-DD) or UNIX seconds, not 'yesterday'."],
      ['created<2024-02-30', "The search is invalid at position 1: created takes a date (YYYY-MM-DD) or UNIX seconds, not '2024-02-30'."],
      ['x "!!"', 'The search is invalid at position 3: the phrase holds no word.'],
    ])('422 for %j', async (search, message) => {
      expectError(await api.get(BASE, { search }), 422, message);
    });
  });

  describe('plain words alone (with Mroonga: counted and paged by the index)', () => {
    it('finds subjects and messages (drafts left out), counts them exactly, pages them in id order both ways', async () => {
      const [w1, w2] = [word(), word()];
      const other = await f.user({ brand_id: brand.id });
      const ticket = (extra: Record<string, unknown>) => f.ticket({ brand: brand.id, department: dept.id, user: other.id, ...extra });
      const x = await ticket({ subject: `Scanner ${w1} offline` });
      const y = await ticket({ subject: 'Another one', text: `The ${w1} does not start, ${w2}.` });
      const z = await ticket({ subject: 'A third' });
      await f.message(z, { text: `Also the ${w1} again` });
      await f.message(x, { text: `draft ${w2}`, is_draft: 1 });
      const all = async (q: Record<string, unknown>) => expectList(await api.get(BASE, { limit: 200, ...q }));
      const found = async (q: Record<string, unknown>) => {
        const res = await api.get(BASE, { limit: 200, ...q });
        expect(res.status).toBe(200);
        return { ids: ids(res.body.data), count: res.body.count };
      };
      expect(await found({ search: w1 })).toEqual({ ids: [x.id, y.id, z.id], count: 3 });
      expect(await found({ search: w1, order_direction: 'desc' })).toEqual({ ids: [z.id, y.id, x.id], count: 3 });
      expect(await found({ search: w1, start: 2, limit: 1 })).toEqual({ ids: [y.id], count: 3 });
      expect(await found({ search: w2 })).toEqual({ ids: [y.id], count: 1 });
      expect(await found({ search: `${w1} ${w2}` })).toEqual({ ids: [y.id], count: 1 });
      // The start of a word finds it too; the number finds its ticket; too short finds nothing.
      expect(await found({ search: w1.slice(0, -2) })).toEqual({ ids: [x.id, y.id, z.id], count: 3 });
      expect(await found({ search: y.number })).toEqual({ ids: [y.id], count: 1 });
      expect(await found({ search: 'ab' })).toEqual({ ids: [], count: 0 });
      // Trashed: out of the list, in the trash's search.
      expect((await api.del(`${BASE}/${z.id}`)).status).toBe(200);
      expect(await found({ search: w1 })).toEqual({ ids: [x.id, y.id], count: 2 });
      expect(ids(await all({ search: w1, trashed: 1 }))).toEqual([z.id]);
    });
  });

  describe('search language on GET /api/export/tickets', () => {
    it('narrows the export to the tickets that match', async () => {
      // Changed an hour ago: past the export's hold-back.
      await Ticket.update({ updated_at: nowSec() - 3600 }, { where: { id: Object.values(t).map((x) => x.id) }, hooks: false });
      const exported = async (search: string) => {
        const found = new Set<number>();
        for (let cursor: string | undefined, i = 0; i < 100; i++) {
          const res = await api.get('/api/export/tickets', { search, limit: 1000, ...(cursor ? { cursor } : {}) });
          expect(res.status).toBe(200);
          for (const r of res.body.data.records) found.add(r.id);
          cursor = res.body.data.after_cursor;
          if (res.body.data.end_of_stream) break;
        }
        return [...found].sort((x, y) => x - y);
      };
      expect(await exported(`${w} tag:${tag.id}`)).toEqual([t.a.id, t.d.id]);
      // An excluded day: every ticket not created on it.
      expect(await exported(`${w} -created:2024-01-20`)).toEqual([t.a.id, t.c.id, t.d.id]);
      // A department with the one below it, by name or id; excluded; a name of none.
      expect(await exported(`department:"${dept.name}"`)).toEqual([t.a.id, t.b.id, t.c.id, t.d.id, t.e.id]);
      expect(await exported(`${w} department:${sub.id}`)).toEqual([t.c.id]);
      expect(await exported(`${w} -department:${sub.id}`)).toEqual([t.a.id, t.b.id, t.d.id]);
      expect(await exported(`${w} department:nosuchdepartment OR ${w} department:${sub.id}`)).toEqual([t.c.id]);
      expectError(await api.get('/api/export/tickets', { search: 'status:' }), 422, 'The search is invalid at position 8: status: needs a value.');
      expectError(await api.get('/api/export/users', { search: 'x' }), 422, 'The search is only accepted by the tickets export.');
    });
  });
}
