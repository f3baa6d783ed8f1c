/**
 * The configuration a ticket embeds (status, priority, department, channel, SLA plan, the
 * brand's addresses) is kept presented per process (src/ticket/configCache.ts): every change
 * made through the API is seen by the very next read, translations included, and a change made
 * by another process is seen as soon as it bumps the shared version.
 */
import { config } from '../../src/config';
import { Setting, TicketStatus } from '../../src/db/models';
import { countQueries, sequelize } from '../../src/db/sequelize';
import { snapshotOf, versionNames, withVersionSnapshot } from '../../src/db/versionedCache';
import { counterClient } from '../../src/redis/windowCounter';
import { bumpConfigVersion, configVersion } from '../../src/ticket/configCache';
import { unique, useApi } from '../helpers/app';
import { expectDeleted, expectList, expectSuccess } from '../helpers/envelope';
import { freshCaches } from '../helpers/queries';
import { ticketContext, ticketFactories, type TicketContext } from './ticketSupport';

const api = useApi();
let ctx: TicketContext;
const f = ticketFactories(api, () => ctx);

beforeAll(async () => {
  ctx = await ticketContext();
});

const CONFIG_TABLES = ['ticket_statuses', 'ticket_priorities', 'departments', 'channels', 'brands', 'settings', 'sla_plans', 'translations'];

/** The tables a show of the ticket reads from. */
async function tablesRead(id: number): Promise<string[]> {
  const { queries } = await countQueries(() => api.get(`/api/ticket/ticket/${id}`));
  return [...new Set(queries.flatMap((q) => [...q.matchAll(/FROM `(\w+)`/g)].map((m) => m[1])))];
}

const show = async (id: number, query: Record<string, unknown> = {}) => expectSuccess(await api.get(`/api/ticket/ticket/${id}`, query));

describe('the configuration a ticket embeds', () => {
  it('is read from the cache once warm, and every change through the API is seen by the next read', async () => {
    const status = expectSuccess(await api.post('/api/ticket/status', { name: unique('Waiting') }), 'Successfully created new status!');
    const ticket = await f.ticket({ status: status.id });
    // Every entry loaded now (an entry loaded long before could expire between two reads).
    await freshCaches();
    expect((await show(ticket.id)).status.name).toBe(status.name);
    // Warm: the configuration costs no statement (the ticket, its user and its own relations remain).
    const warm = await tablesRead(ticket.id);
    expect(warm.filter((t) => CONFIG_TABLES.includes(t))).toEqual([]);
    expect(warm).toEqual(expect.arrayContaining(['tickets', 'users']));

    expectSuccess(await api.put(`/api/ticket/status/${status.id}`, { name: 'Renamed', 'name:fr': 'Renommé', colour: '#123456' }), 'Successfully updated the status!');
    expect(await tablesRead(ticket.id)).toEqual(expect.arrayContaining(['ticket_statuses', 'translations']));
    expect((await show(ticket.id)).status).toMatchObject({ name: 'Renamed', colour: '#123456' });
    expect((await show(ticket.id, { lang: 'fr' })).status.name).toBe('Renommé');

    const department = expectSuccess(await api.get(`/api/ticket/department/${ctx.departmentId}`));
    const description = `Now ${unique('d')}`;
    expectSuccess(await api.put(`/api/ticket/department/${ctx.departmentId}`, { description }), 'Successfully updated the department!');
    try {
      expect((await show(ticket.id)).department.description).toBe(description);
    } finally {
      // The seeded department is shared with the files that run after this one.
      expectSuccess(await api.put(`/api/ticket/department/${ctx.departmentId}`, { description: department.description }), 'Successfully updated the department!');
    }
  });

  it("keeps a ticket's tags presented too: a rename, a translation and a delete are seen by the next read", async () => {
    const tag = expectSuccess(await api.post('/api/ticket/tag', { name: unique('Billing'), colour: '#101010' }), 'Successfully created new tag!');
    const ticket = await f.ticket({ tag: [tag.id] });
    await freshCaches();
    const tagsOf = async (query: Record<string, unknown> = {}) => (await show(ticket.id, query)).tags.map((t: any) => ({ id: t.id, name: t.name, colour: t.colour }));
    expect(await tagsOf()).toEqual([{ id: tag.id, name: tag.name, colour: '#101010' }]);
    // Warm: the ticket's links are read (its tag ids), the tag itself is not.
    expect((await tablesRead(ticket.id)).filter((t) => ['ticket_tags', ...CONFIG_TABLES].includes(t))).toEqual([]);
    const listed = async () => expectList(await api.get('/api/ticket/ticket', { tag: tag.id })).map((t: any) => t.tags.map((g: any) => g.name));

    const name = unique('Invoices');
    expectSuccess(await api.put(`/api/ticket/tag/${tag.id}`, { name, colour: '#202020' }), 'Successfully updated the tag!');
    expect(await tagsOf()).toEqual([{ id: tag.id, name, colour: '#202020' }]);
    expectSuccess(await api.put(`/api/ticket/tag/${tag.id}`, { name, 'name:fr': 'Factures' }), 'Successfully updated the tag!');
    expect((await show(ticket.id, { lang: 'fr' })).tags[0].name).toBe('Factures');
    expect(await listed()).toEqual([[name]]);

    // A tag new to the cache is read at once.
    const second = expectSuccess(await api.post('/api/ticket/tag', { name: unique('Refunds') }), 'Successfully created new tag!');
    expectSuccess(await api.put(`/api/ticket/ticket/${ticket.id}`, { tag: [tag.id, second.id] }), 'Successfully updated the ticket!');
    expect((await tagsOf()).map((t: { name: string }) => t.name).sort()).toEqual([name, second.name].sort());

    expectDeleted(await api.del(`/api/ticket/tag/${tag.id}`), 'tag');
    expect((await tagsOf()).map((t: { name: string }) => t.name)).toEqual([second.name]);
  });

  it('follows a change another process committed, once that process bumped the shared version', async () => {
    const ticket = await f.ticket();
    await freshCaches(); // kept from now on, not expiring before the bump below
    const before = (await show(ticket.id)).status.name;
    // Another process's change: written without this process's models, then the version bumped.
    await sequelize().query('UPDATE ticket_statuses SET name = :name WHERE id = :id', { replacements: { name: 'Elsewhere', id: ticket.status_id } });
    expect((await show(ticket.id)).status.name).toBe(before);
    await counterClient().incr(`${config().queuePrefix}:config-version`);
    expect((await show(ticket.id)).status.name).toBe('Elsewhere');
    await TicketStatus.update({ name: before }, { where: { id: ticket.status_id } });
    expect((await show(ticket.id)).status.name).toBe(before);
  });

  it('follows the settings: the operator address moves with admin_folder', async () => {
    const ticket = await f.ticket();
    const folder = unique('staff');
    const old = (await Setting.findOne({ where: { scope: 'core', name: 'admin_folder' } }))!.value;
    await Setting.update({ value: folder }, { where: { scope: 'core', name: 'admin_folder' } });
    try {
      expect((await show(ticket.id)).operator_url).toContain(`/${folder}/ticket/view/${ticket.id}`);
    } finally {
      await Setting.update({ value: old }, { where: { scope: 'core', name: 'admin_folder' } });
    }
  });
});

describe('the versions one request uses (db/versionedCache.ts VersionSnapshot)', () => {
  const key = () => `${config().queuePrefix}:config-version`;

  it("are read once for the request, a bump by another process applies to the next request, and the request's own bump to the rest of it", async () => {
    let otherBump = '';
    await withVersionSnapshot(new Map(), async () => {
      const first = await configVersion();
      expect(first).toBe((await counterClient().get(key())) ?? '0');
      // Another process's change, committed and bumped while this request runs.
      otherBump = String(await counterClient().incr(key()));
      expect(await configVersion()).toBe(first);
    });
    // The next request (here: outside any) reads it.
    expect(await configVersion()).toBe(otherBump);
    await withVersionSnapshot(new Map(), async () => {
      expect(await configVersion()).toBe(otherBump);
      await bumpConfigVersion();
      const own = await configVersion();
      expect(own).toBe(await counterClient().get(key()));
      expect(Number(own)).toBeGreaterThan(Number(otherBump));
    });
  });

  it('are taken from the reading made with the rate limits at the start of an API request', async () => {
    // The snapshot of a request holds a promise per version name from the start (res.locals.versions).
    const snapshot = snapshotOf(Promise.resolve({ values: versionNames().map((n) => (n === 'config-version' ? '41' : null)) }), versionNames());
    await withVersionSnapshot(snapshot, async () => {
      expect(await configVersion()).toBe('41');
      // A version Redis had no value for is version 0, as a GET of a missing key reads.
      expect(await snapshot.get('definitions-version')).toBe('0');
    });
    const failed = snapshotOf(Promise.resolve(null), versionNames());
    await withVersionSnapshot(failed, async () => expect(await configVersion()).toBeNull());
  });
});
