process.env.PROCESS_NAME ??= 'worker-scheduler';
import { exitOnStartupError } from '../src/lib/exitOnStartupError';
import { startWorkerProcess } from '../src/queue/runWorker';
import { schedulerSpec, wire } from '../src/wiring';

wire();
startWorkerProcess(schedulerSpec()).catch(exitOnStartupError);
