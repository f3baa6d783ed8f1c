// Imported first by outbound.test.ts, before any module reads the configuration: no internal
// target allowed (test/helpers/env.ts lists 127.0.0.1 for every other webhook test).
process.env.OUTBOUND_ALLOW_HOSTS = '';
