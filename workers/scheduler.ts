process.env.PROCESS_NAME ??= 'worker-scheduler';
import { startWorkerProcess } from '../src/queue/runWorker';
import { schedulerSpec } from '../src/scheduler/jobs';
import { exitOnStartupError } from '../src/cli/exitOnStartupError';

startWorkerProcess(schedulerSpec()).catch(exitOnStartupError);
