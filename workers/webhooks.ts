process.env.PROCESS_NAME ??= 'worker-webhooks';
import { webhooksSpec } from '../src/webhooks/jobs';
import { startWorkerProcess } from '../src/queue/runWorker';
import { exitOnStartupError } from '../src/cli/exitOnStartupError';

startWorkerProcess(webhooksSpec()).catch(exitOnStartupError);
