import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Router } from 'express';
import { QUEUES } from '../queue/names';
import { queue } from '../queue/producer';

export const DASHBOARD_PATH = '/admin/queues';

/** Bull Board over every queue of the project (mounted behind the API's token auth). */
export function dashboardRouter(): Router {
  const adapter = new ExpressAdapter();
  adapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({ queues: Object.values(QUEUES).map((name) => new BullMQAdapter(queue(name))), serverAdapter: adapter });
  return adapter.getRouter();
}
