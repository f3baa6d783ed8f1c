import { SentinelConnector, type SentinelConnectionOptions } from 'ioredis';

/** What of ioredis's connector this class reads: its failover detector (a private field). */
interface DetectorField {
  failoverDetector?: { isDisconnected: boolean } | null;
}

/**
 * ioredis's Sentinel connector, except that a failover the Sentinels announce while the client is
 * reconnecting does not end the client for good.
 *
 * The failover detector (`failoverDetector: true`) reconnects the client when a Sentinel publishes
 * +switch-master by calling the connector's `disconnect()`, the one the client's own `disconnect()`
 * calls, which also gives up any connection under way. After the master died the client
 * reconnects again and again until the Sentinels name another; an announcement that lands while
 * one of those attempts asks a Sentinel for the master fails that attempt ("Connection is closed")
 * and the client ends (status "end"): every later command fails at once, and a BullMQ worker
 * stops moving its jobs (ioredis 5.11; seen in test/redis/sentinel-failover.test.ts). Here the
 * detector's call only ends the current connection; the client's own still gives up everything.
 *
 * Given as the `Connector` option, so every duplicate of the client (BullMQ's blocking
 * connections) has it too.
 */
export class FailoverSafeSentinelConnector extends SentinelConnector {
  // ioredis hands a `Connector` the client's options, typed as unknown.
  constructor(options: unknown) {
    super(options as SentinelConnectionOptions);
  }

  disconnect(): void {
    const self = this as unknown as DetectorField;
    // The detector marks itself before it calls; a cleaned-up detector never stays in the field
    // (below), so a marked one here is the detector calling.
    const byDetector = self.failoverDetector?.isDisconnected === true;
    const connecting = this.connecting;
    super.disconnect();
    self.failoverDetector = null;
    if (byDetector) this.connecting = connecting;
  }
}
