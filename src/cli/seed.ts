process.env.PROCESS_NAME ??= 'cli';
import { sequelize } from '../db/sequelize';
import { exitOnStartupError } from './exitOnStartupError';
import { prepareDatabase } from './setup';

/** `npm run seed`: migrates if needed, then adds the default records that are missing. */
async function main() {
  await prepareDatabase();
  process.stdout.write('Seed applied.\n');
  await sequelize().close();
}

main().catch(exitOnStartupError);
