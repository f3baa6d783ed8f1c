import { Cluster, type ClusterNode, type ClusterOptions, type Redis } from 'ioredis';

/** What of ioredis's Cluster this class uses beyond its public API (private methods). */
interface ClusterInternals {
  status: string;
  setStatus(status: string): void;
  handleCloseEvent(reason?: Error): void;
}

/** ioredis's message for a command or a connection cut short by a close (BullMQ recognises it). */
const CONNECTION_CLOSED = 'Connection is closed.';

/**
 * ioredis's cluster client, except that `connect()` settles, and the client always ends when it
 * is disconnected, and stays ended.
 *
 * ioredis (5.11) resolves `connect()` only if the cluster's state is ok at the first attempt: when
 * a node says `cluster_state:fail` (as while a master fails over) the client disconnects and tries
 * again on its own, and the promise the caller holds never settles. BullMQ awaits it when it
 * reconnects a worker's blocking connection after a blocking command timed out: the worker stopped
 * fetching jobs, and its close waited for ever (test/redis/cluster-failover.test.ts, about one
 * failover in six). Here it also resolves when the client becomes ready, and rejects when it ends;
 * and when no startup node answers the first attempt, which ioredis rejects at once though it
 * tries again, it waits for the client's retries (a loaded machine failed `connect()` so).
 *
 * ioredis moves a cluster client to `close` when its pool of node connections empties: a
 * disconnect empties the pool at once and waits for the first node connection to end. Two cases
 * leave the client waiting for ever, and BullMQ (which waits for `end`, or for `ready`, on a
 * worker's blocking connection) with it:
 * - a node connection that ends after the client ended (each node's socket closes on its own
 *   time) empties the pool again, and the client goes back from `end` to `close`, with nothing to
 *   reconnect or end it: a worker's close, or its fetch loop reconnecting after a blocking command
 *   timed out, waits for ever (seen in the same test, where BullMQ disconnects and reconnects its
 *   blocking clients while node connections come and go);
 * - a disconnect when the pool is already empty (reconnecting after every node was lost, or left in
 *   `close` by the case above) has no node connection to wait for, and stays `disconnecting`.
 *
 * And a connect() right after a disconnect waits for the node connections the disconnect left
 * ending: ioredis's pool knows a connection by its node's address, and an old connection's end
 * takes the new connection to the same node out of the pool. When that empties the pool, the
 * client ends, if it was disconnected by hand, instead of connecting (a CI run of
 * test/redis/cluster-client.test.ts: connect() failed, 'Connection is closed.'). Each waits at most
 * `redisOptions.disconnectTimeout` (2 s by default) before ioredis destroys its socket.
 *
 * Every duplicate (BullMQ's blocking connections) is one too.
 */
export class FailoverSafeCluster extends Cluster {
  constructor(private readonly startup: ClusterNode[], options?: ClusterOptions) {
    super(startup, options);
  }

  /** The next `ready` or `end` of the client, while a connect() waits for one. */
  private readyOrEnded?: Promise<void>;

  // (No initialisers: ioredis's constructor calls connect() before a subclass's fields are set.)
  /** The node connections of the last connection, which may still be ending. */
  private leaving?: Redis[];

  /** How many times the client was disconnected: a connect() that waited gives up if it was again. */
  private disconnects?: number;

  connect(): Promise<void> {
    const leaving = (this.leaving ?? []).filter((node) => node.status !== 'end');
    this.leaving = [];
    if (leaving.length > 0) {
      const at = this.disconnects;
      return Promise.all(leaving.map((node) => new Promise((resolve) => node.once('end', resolve))))
        .then(() => (this.disconnects === at ? this.connect() : Promise.reject(new Error(CONNECTION_CLOSED))));
    }
    // One pair of listeners however many attempts wait (the client's own retries call this too).
    this.readyOrEnded ??= new Promise<void>((resolve, reject) => {
      const settle = (done: () => void) => {
        this.off('ready', ready);
        this.off('end', ended);
        this.readyOrEnded = undefined;
        done();
      };
      const ready = () => settle(resolve);
      const ended = () => settle(() => reject(new Error(CONNECTION_CLOSED)));
      this.on('ready', ready);
      this.on('end', ended);
    });
    const readyOrEnded = this.readyOrEnded;
    // ioredis rejects when its first attempt finds no node ('None of startup nodes is available'),
    // though its retry strategy then tries again: the client's ready or end settles it instead.
    const attempt = super.connect().catch((err: unknown) => {
      if (this.status === 'reconnecting') return readyOrEnded;
      throw err;
    });
    return Promise.race([attempt, readyOrEnded]);
  }

  disconnect(reconnect = false): void {
    this.disconnects = (this.disconnects ?? 0) + 1;
    if (this.status === 'end' && !reconnect) return;
    this.leaving = [...(this.leaving ?? []), ...this.nodes('all')];
    // ioredis ends a client that never connected ('wait') itself.
    const empty = this.nodes().length === 0 && this.status !== 'wait';
    super.disconnect(reconnect);
    if (empty) {
      const self = this as unknown as ClusterInternals;
      self.setStatus('close');
      self.handleCloseEvent();
    }
  }

  duplicate(overrideStartupNodes: ClusterNode[] = [], overrideOptions: ClusterOptions = {}): Cluster {
    return new FailoverSafeCluster(overrideStartupNodes.length ? overrideStartupNodes : [...this.startup], { ...this.options, ...overrideOptions });
  }
}

// A private method of ioredis's, so replaced on the prototype: a client that ended stays ended
// until it is connected again (connect() moves it to `connecting` first).
const base = Cluster.prototype as unknown as ClusterInternals;
(FailoverSafeCluster.prototype as unknown as ClusterInternals).setStatus = function setStatus(this: ClusterInternals, status: string) {
  if (status === 'close' && this.status === 'end') return;
  base.setStatus.call(this, status);
};
