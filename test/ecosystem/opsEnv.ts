import { freePortsSync } from '../helpers/ports';
// Imported first by ops.test.ts, before any module reads the configuration.
process.env.METRICS_TOKEN = 'metrics-token-for-the-tests';
// A port free now, below the ephemeral range (../helpers/ports.ts: `listen(0)` hands out one that
// any outgoing connection may take before the test binds it), found synchronously: the
// configuration is read at import.
[process.env.METRICS_PORT] = freePortsSync(1).map(String);
