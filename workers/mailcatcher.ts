process.env.PROCESS_NAME ??= 'mailcatcher';
import { config } from '../src/config';
import { sequelize } from '../src/db/sequelize';
import { logger } from '../src/logger';
import { exitOnStartupError } from '../src/lib/exitOnStartupError';
import { guardStrayRejections } from '../src/lib/strayRejections';
import { startMailCatcher } from '../src/mailcatcher/server';

/** The mail catcher's process (`npm start` runs it unless MAIL_CATCHER=0; compose runs it as a service). */
async function main() {
  guardStrayRejections();
  const { host, port, keep } = config().mailCatcher;
  await sequelize().authenticate();
  const catcher = await startMailCatcher({ host, port, keep });
  logger.info({ host, port: catcher.port }, 'mail catcher listening (SMTP)');
  const stop = async () => {
    await catcher.close();
    await sequelize().close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

main().catch(exitOnStartupError);
