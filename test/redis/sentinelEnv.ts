// Imported first by sentinel-failover.test.ts, before any module reads the configuration: the app
// finds its Redis through three Sentinels of the test's own (on these ports, started by the test),
// and the scheduler sweeps the outbox every 200 ms, re-adding what was published but is not
// processed 2 s later (a job that died with the master).
import { freePortsSync } from '../helpers/ports';

export const SENTINEL_PORTS = freePortsSync(3);
// A name of this run's own: a Sentinel takes the hello messages (and so the Sentinels and
// replicas they announce) of its master's name only. Another run's set on this machine may take
// a port this run's set used (a killed master's), and under one shared name its Sentinels joined
// this run's set: it then never settled (seen with two runs at once).
export const SENTINEL_MASTER = `hdmaster_${process.pid}_${Date.now().toString(36)}`;
Object.assign(process.env, {
  REDIS_SENTINELS: SENTINEL_PORTS.map((p) => `127.0.0.1:${p}`).join(','), REDIS_SENTINEL_NAME: SENTINEL_MASTER,
  OUTBOX_SWEEP_EVERY_MS: '200', OUTBOX_SWEEP_AFTER_MS: '0', OUTBOX_REPUBLISH_AFTER_MS: '2000',
});
