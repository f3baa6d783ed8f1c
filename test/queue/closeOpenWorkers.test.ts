/**
 * closeOpenWorkers (what useApi's teardown runs before it closes the database and the queues'
 * connections) stops every worker the process built and has not closed, and a worker's own close
 * stays safe to call before or after it.
 */
import { mailSpec, schedulerSpec } from '../../src/wiring';
import { closeOpenWorkers, createWorker } from '../../src/queue/runWorker';
import { useApi } from '../helpers/app';

useApi();

it('closes the workers still open, once each, whatever closed them first', async () => {
  const closedFirst = await createWorker(mailSpec());
  const leftOpen = await createWorker(schedulerSpec());
  await closedFirst.close();
  expect(closedFirst.worker.closing).toBeTruthy();
  expect(leftOpen.worker.closing).toBeFalsy();
  expect(leftOpen.worker.isRunning()).toBe(true);

  await closeOpenWorkers();
  expect(leftOpen.worker.closing).toBeTruthy();
  expect(leftOpen.worker.isRunning()).toBe(false);
  // Closing again (the file's own afterAll after useApi's) returns at once and throws nothing.
  await expect(leftOpen.close()).resolves.toBeUndefined();
  await expect(closedFirst.close()).resolves.toBeUndefined();
  await expect(closeOpenWorkers()).resolves.toBeUndefined();
});
