process.env.PROCESS_NAME ??= 'worker-mailbox';
import { exitOnStartupError } from '../src/lib/exitOnStartupError';
import { startWorkerProcess } from '../src/queue/runWorker';
import { mailboxSpec, wire } from '../src/wiring';

wire();
startWorkerProcess(mailboxSpec()).catch(exitOnStartupError);
