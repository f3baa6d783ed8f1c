process.env.PROCESS_NAME ??= 'worker-webhooks';
import { exitOnStartupError } from '../src/lib/exitOnStartupError';
import { startWorkerProcess } from '../src/queue/runWorker';
import { webhooksSpec, wire } from '../src/wiring';

wire();
startWorkerProcess(webhooksSpec()).catch(exitOnStartupError);
