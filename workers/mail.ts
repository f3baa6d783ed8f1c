process.env.PROCESS_NAME ??= 'worker-mail';
import { exitOnStartupError } from '../src/lib/exitOnStartupError';
import { startWorkerProcess } from '../src/queue/runWorker';
import { mailSpec, wire } from '../src/wiring';

wire();
startWorkerProcess(mailSpec()).catch(exitOnStartupError);
