import { groongaEnvironment } from '../helpers/groongaServer';

// Imported first by ticket-search-groonga-http.test.ts, before any module reads the configuration:
// the ticket search on a Groonga server of the test's own, over its HTTP interface.
export const groongaPort = groongaEnvironment('http');
