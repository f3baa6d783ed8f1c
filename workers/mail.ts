process.env.PROCESS_NAME ??= 'worker-mail';
import { mailSpec } from '../src/mail/jobs';
import { startWorkerProcess } from '../src/queue/runWorker';
import { exitOnStartupError } from '../src/cli/exitOnStartupError';

startWorkerProcess(mailSpec()).catch(exitOnStartupError);
