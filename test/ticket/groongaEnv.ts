import { groongaEnvironment } from '../helpers/groongaServer';

// Imported first by ticket-search-groonga.test.ts, before any module reads the configuration: the
// ticket search on a Groonga server of the test's own (GQTP, the default protocol).
export const groongaPort = groongaEnvironment('gqtp');
