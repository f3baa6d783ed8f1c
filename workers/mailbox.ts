process.env.PROCESS_NAME ??= 'worker-mailbox';
import { mailboxSpec } from '../src/mailbox/jobs';
import { startWorkerProcess } from '../src/queue/runWorker';
import { exitOnStartupError } from '../src/cli/exitOnStartupError';

startWorkerProcess(mailboxSpec()).catch(exitOnStartupError);
