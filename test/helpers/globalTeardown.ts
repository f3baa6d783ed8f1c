import { dropTestResources } from './testResources';

/** Drops this run's databases and queue keys. */
export default async function globalTeardown(): Promise<void> {
  await dropTestResources({ run: String(process.env.HELPDESK_TEST_RUN ?? process.pid) });
}
