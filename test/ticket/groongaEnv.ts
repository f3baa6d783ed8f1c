import { freePortsSync } from '../helpers/ports';

// Imported first by ticket-search-groonga.test.ts, before any module reads the configuration: the
// ticket search on a Groonga server of the test's own (test/helpers/groongaServer.ts), on a port
// free now, found synchronously (the configuration is read at import).
export const groongaPort = freePortsSync(1)[0];
process.env.SEARCH_ENGINE = 'groonga';
process.env.SEARCH_GROONGA_URL = `http://127.0.0.1:${groongaPort}`;
// The least the stream holds changes back: the index catches up a second after a write.
process.env.EXPORT_SETTLE_SECONDS = '1';
