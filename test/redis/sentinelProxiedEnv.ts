// Imported first by sentinel-reconnect.test.ts, before any module reads the configuration: the app
// finds its Redis through three Sentinels of the test's own, each behind a proxy of the test's
// (on PROXY_PORTS) that can hold the app's requests to it.
import { freePortsSync } from '../helpers/ports';

export const [PROXY_PORTS, SENTINEL_PORTS] = ((p) => [p.slice(0, 3), p.slice(3)])(freePortsSync(6));
// A name of this run's own (see sentinelEnv.ts).
export const SENTINEL_MASTER = `hdproxied_${process.pid}_${Date.now().toString(36)}`;
Object.assign(process.env, {
  REDIS_SENTINELS: PROXY_PORTS.map((p) => `127.0.0.1:${p}`).join(','), REDIS_SENTINEL_NAME: SENTINEL_MASTER,
});
