import './exportEnv';

// Imported first by export-unprivileged.test.ts: the app connects as a user of the file's own that
// has every privilege on the worker's database and none beyond it (no PROCESS), as many hosted
// databases give. The test creates it (as root) before the app's first connection.
export const ROOT_URL = process.env.DATABASE_URL!;
export const USER = `helpdesk_np${process.pid}`;
export const PASSWORD = 'np-secret';
const url = new URL(ROOT_URL);
url.username = USER;
url.password = PASSWORD;
process.env.DATABASE_URL = url.toString();
