import { ensureDovecotInstalled } from './dovecot';
import { ensureGroongaInstalled } from './groongaServer';
import { dropTestResources } from './testResources';

/**
 * Once per run: names this run (workers inherit the variable), checks that MariaDB and Redis
 * answer, and clears what killed runs left behind (and anything an earlier run with this pid left).
 */
export default async function globalSetup(): Promise<void> {
  process.env.HELPDESK_TEST_RUN = String(process.pid);
  ensureDovecotInstalled(); // the mailbox tests start their own dovecot (test/helpers/dovecot.ts)
  ensureGroongaInstalled(); // the search tests on a Groonga server start their own (test/helpers/groongaServer.ts)
  await dropTestResources('dead');
  await dropTestResources({ run: String(process.pid) });
}
