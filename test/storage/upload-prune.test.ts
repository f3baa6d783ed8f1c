/**
 * pruneUploads: an upload (stored once per content, shared) goes once no ticket or article
 * attachment names it, past an hour's grace; one still named stays, and so does one a transaction
 * is attaching again while the prune runs. The walk keeps its position and starts again past the
 * last upload.
 */
import { randomBytes } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { sequelize } from '../../src/db/sequelize';
import { TicketAttachment } from '../../src/db/models';
import { schedulerIdOf } from '../../src/queue/jobs';
import { pruneUploads, uploadPruneJob } from '../../src/storage/uploadPrune';
import { hashOf } from '../../src/storage/hash';
import { put } from '../../src/storage/uploads';
import { sweepAttachmentsDirectory } from '../../src/storage/sweepJob';
import { purgeTrash } from '../../src/ticket/trashPurge';
import { schedulerSpec } from '../../src/wiring';
import { asBytes } from '../helpers/bytes';
import { nowSec, useApi } from '../helpers/app';
import { expectList } from '../helpers/envelope';
import { raceAfterHeld } from '../helpers/races';
import { factories } from '../selfservice/support';
import { b64, ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const f = ticketFactories(api, () => ctx);
const articles = factories(api);

const stored = async (hashes: string[]) => (await sequelize().query<{ hash: string }>('SELECT hash FROM uploads WHERE hash IN (:hashes) ORDER BY hash', {
  replacements: { hashes }, type: QueryTypes.SELECT,
})).map((r) => r.hash);
const position = async () => (await sequelize().query<{ through_id: number }>("SELECT through_id FROM log_prunes WHERE log = 'uploads'", { type: QueryTypes.SELECT }))[0].through_id;
/** Every upload an hour and a minute old: past the grace. */
const aged = () => sequelize().query('UPDATE uploads SET created_at = :at', { replacements: { at: nowSec() - 3660 } });
/** Runs the walk until it has looked at every upload once more (the windows of a run stop there). */
const walkOnce = async () => {
  let removed = await pruneUploads();
  while (await position() !== 0) removed += await pruneUploads();
  return removed;
};

it('is scheduled hourly; the daily sweep of the attachments directory has nothing to do without one', async () => {
  expect(schedulerSpec().jobs.filter((j) => j.schedule).map(schedulerIdOf)).toContain(schedulerIdOf(uploadPruneJob));
  expect(await sweepAttachmentsDirectory()).toBe(0);
});

it('removes the uploads no attachment names, keeps those a ticket or an article names and those inside the grace', async () => {
  const [shared, only, article, young] = [randomBytes(300), randomBytes(300), randomBytes(300), randomBytes(300)];
  const gone = await f.ticket({ attachment: [{ filename: 'shared.txt', contents: b64(shared) }, { filename: 'only.txt', contents: b64(only) }] });
  const kept = await f.ticket({ attachment: [{ filename: 'shared.txt', contents: b64(shared) }] });
  await articles.article({ attachment: [{ filename: 'article.txt', contents: b64(article) }] });
  const hashes = [shared, only, article, young].map(hashOf);
  // The first ticket deleted for good, as the trash's retention does: its attachments go, the uploads stay.
  expect((await api.del(`/api/ticket/ticket/${gone.id}`)).status).toBe(200);
  await sequelize().query('UPDATE tickets SET deleted_at = :at WHERE id = :id', { replacements: { at: nowSec() - 31 * 86400, id: gone.id } });
  expect(await purgeTrash()).toBeGreaterThanOrEqual(1);
  expect(await stored(hashes)).toEqual(hashes.slice(0, 3).sort());
  await aged();
  // Stored just now and named by nothing (as a transaction that has not attached it yet): inside the grace.
  await sequelize().transaction(async (t) => put(young, 'young.txt', t));

  expect(await walkOnce()).toBeGreaterThanOrEqual(1);
  expect(await stored(hashes)).toEqual([hashOf(shared), hashOf(article), hashOf(young)].sort());
  const [attachment] = expectList(await api.get('/api/ticket/attachment', { ticket_id: kept.id }));
  const res = await asBytes(api.get(`/api/ticket/attachment/${attachment.id}/download`));
  expect(Buffer.compare(res.body as Buffer, shared)).toBe(0);
  expect(await walkOnce()).toBe(0);
});

it('walks a window of uploads a transaction and a bounded number of windows a run, from where the last run stopped', async () => {
  for (let i = 0; i < 3; i++) await sequelize().transaction(async (t) => put(randomBytes(50), 'walk.txt', t));
  await walkOnce();
  expect(await position()).toBe(0);
  // What is left after a whole walk (the uploads named, or inside the grace: these three).
  const ids = (await sequelize().query<{ id: number }>('SELECT id FROM uploads ORDER BY id', { type: QueryTypes.SELECT })).map((r) => r.id);
  expect(ids.length).toBeGreaterThanOrEqual(3);
  await pruneUploads({ window: 1, windows: 2 });
  expect(await position()).toBe(ids[1]);
  await pruneUploads({ window: 1, windows: 1 });
  expect(await position()).toBe(ids[2]);
  // Past the last upload it starts again from the first.
  await pruneUploads({ window: ids.length, windows: 1 });
  expect(await position()).toBe(0);
});

it('keeps an upload that a transaction attaches again while the prune runs: the prune waits for it, then finds it named', async () => {
  const bytes = randomBytes(300);
  const ticket = await f.ticket({ attachment: [{ filename: 'again.txt', contents: b64(bytes) }] });
  await TicketAttachment.destroy({ where: { ticket_id: ticket.id } });
  await aged();
  // (The walk may remove uploads left unnamed before, the earlier test's young one among them.)
  await raceAfterHeld(async (t) => {
    const upload = await put(bytes, 'again.txt', t);
    await TicketAttachment.create({ ticket_id: ticket.id, message_id: null, upload_hash: upload.hash, original_name: 'again.txt' }, { transaction: t });
  }, walkOnce, 'FROM uploads WHERE id IN', 'the prune to wait on the upload being attached');
  expect(await stored([hashOf(bytes)])).toEqual([hashOf(bytes)]);
});
