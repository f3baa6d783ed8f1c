process.env.PROCESS_NAME ??= 'mailcatcher';
import { config } from '../src/config';
import { sequelize } from '../src/db/sequelize';
import { logger } from '../src/logger';
import { exitOnStartupError, withPortSetting } from '../src/lib/exitOnStartupError';
import { guardStrayRejections } from '../src/lib/strayRejections';
import { startMailCatcher } from '../src/mailcatcher/server';
import { stopWhenSupervisorGone } from '../src/lib/supervisor';

/** The mail catcher's process (`npm start` runs it unless MAIL_CATCHER=0; compose runs it as a service). */
async function main() {
  guardStrayRejections();
  const { host, port, keep } = config().mailCatcher;
  await sequelize().authenticate();
  // A port in use is MAIL_CATCHER_PORT's: the start-up line names it, not PORT.
  const catcher = await startMailCatcher({ host, port, keep }).catch((err: unknown) => { throw withPortSetting(err, 'MAIL_CATCHER_PORT'); });
  logger.info({ host, port: catcher.port }, 'mail catcher listening (SMTP)');
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'mail catcher stopping');
    await catcher.close();
    await sequelize().close();
    logger.info('mail catcher stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  stopWhenSupervisorGone();
}

main().catch(exitOnStartupError);
