/**
 * claimOnce: the first run of a piece of background work takes its claim in the work's own
 * transaction; a second run (BullMQ running a job again) finds it taken, a run whose transaction
 * rolled back left it free. pruneClaims removes claims past their week.
 */
import { QueryTypes } from 'sequelize';
import { sequelize } from '../../src/db/sequelize';
import { transaction } from '../../src/db/transaction';
import { claimOnce, claimPruneJob, pruneClaims } from '../../src/queue/claims';
import { schedulerIdOf } from '../../src/queue/jobs';
import { schedulerSpec } from '../../src/wiring';
import { nowSec, unique, useApi } from '../helpers/app';

useApi();

const held = async (keys: string[]) => (await sequelize().query<{ claim: string }>('SELECT claim FROM job_claims WHERE claim IN (:keys) ORDER BY claim', {
  replacements: { keys }, type: QueryTypes.SELECT,
})).map((r) => r.claim);

it('is taken once: again after a commit it is refused, after a rollback it is free', async () => {
  const key = unique('claim');
  await expect(transaction((t) => claimOnce(key, t))).resolves.toBe(true);
  await expect(transaction((t) => claimOnce(key, t))).resolves.toBe(false);

  const other = unique('claim');
  await expect(transaction(async (t) => {
    expect(await claimOnce(other, t)).toBe(true);
    throw new Error('the work failed');
  })).rejects.toThrow('the work failed');
  await expect(transaction((t) => claimOnce(other, t))).resolves.toBe(true);
});

it('two runs at once: one takes the claim, the other waits for its commit and finds it taken', async () => {
  const key = unique('claim');
  const runs = await Promise.all([transaction((t) => claimOnce(key, t)), transaction((t) => claimOnce(key, t))]);
  expect(runs.sort()).toEqual([false, true]);
});

it('claims past a week are pruned, by the scheduler hourly', async () => {
  expect(schedulerSpec().jobs.filter((j) => j.schedule).map(schedulerIdOf)).toContain(schedulerIdOf(claimPruneJob));
  const t = nowSec();
  const [old, recent] = [unique('old'), unique('recent')];
  await sequelize().query('INSERT INTO job_claims (claim, created_at) VALUES (:old, :a), (:recent, :b)', {
    replacements: { old, recent, a: t - 7 * 86400 - 1, b: t - 7 * 86400 + 3600 },
  });
  expect(await pruneClaims(t)).toBeGreaterThanOrEqual(1);
  expect(await held([old, recent])).toEqual([recent]);
});
