import * as mariadb from 'mariadb';
import { ConnectionError } from 'sequelize';
import type { Sequelize } from 'sequelize-typescript';
import type { Config } from '../config';
import { logger } from '../logger';
import { replicaReadsAllowed } from './readRouting';

type Address = Config['database']['replicas'][number];
/** A replica's entry in Sequelize's `replication.read` list (Sequelize fills in the rest of the options). */
type ReadTarget = Record<string, unknown>;

interface Replica {
  address: Address;
  target: ReadTarget;
  healthy: boolean;
  /** Why it is out of rotation (logged when that changes). */
  reason: string;
  monitor?: mariadb.Connection;
}

export interface ReplicaOptions { maxLagSeconds: number; checkMs: number; connectTimeoutMs: number }

/**
 * Read replicas behind Sequelize's replication support. Sequelize keeps one read pool whose new
 * connections go round-robin over `replication.read`, and sends a SELECT there unless it runs in
 * a transaction or with `useMaster`. This module adds, on the one instance:
 *
 * - **Routing.** `getConnection` is wrapped: a SELECT reads from a replica only inside
 *   `readsFromReplica` (db/readRouting.ts) and while some replica is healthy; otherwise it takes a
 *   primary connection (`useMaster`, Sequelize's own switch). Writes never reach the read pool.
 * - **Health.** Every `checkMs` a monitoring connection per replica asks `SHOW SLAVE STATUS`: a
 *   replica whose `Seconds_Behind_Master` is NULL (replication stopped) or above `maxLagSeconds`,
 *   or that does not answer, leaves the rotation, and comes back once a check passes. Leaving the
 *   rotation is done with Sequelize's pool as it is: the read list Sequelize picks new
 *   connections from (`connectionManager.config.replication.read`, read at every connect) is
 *   edited in place to the healthy replicas, and the read pool's `validate` refuses a pooled
 *   connection to a replica out of rotation, so the pool closes it rather than hand it out.
 * - **No failed request for a replica that died between two checks.** A read whose replica
 *   connection cannot be had (refused, timed out) is given a primary connection instead, and a
 *   check runs at once. (A statement already running on a replica when it dies fails, as it would
 *   on a primary that dies.)
 */
export class Replicas {
  private readonly replicas: Replica[];
  private readonly targetOf = new WeakMap<object, Replica>();
  private live: ReadTarget[] = [];
  private timer?: NodeJS.Timeout;
  private checking?: Promise<void>;

  constructor(addresses: Address[], private readonly options: ReplicaOptions) {
    this.replicas = addresses.map((address) => ({ address, target: {}, healthy: false, reason: 'not checked yet' }));
  }

  /** Sequelize's `replication` option: the primary and the replicas. */
  replication(primary: Address) {
    const target = (a: Address) => ({ host: a.host, port: a.port, username: a.user, password: a.password, database: a.name });
    return { write: target(primary), read: this.replicas.map((r) => target(r.address)) };
  }

  /** The pools' `validate`: a live connection, and for a read one, to a replica in rotation. */
  readonly validate = (connection: any): boolean => {
    if (!connection?.isValid?.()) return false;
    const replica = this.targetOf.get(connection);
    return !replica || replica.healthy;
  };

  get healthyCount(): number {
    return this.replicas.filter((r) => r.healthy).length;
  }

  /** Wires routing and health checks into `s`, built with `replication()` and `validate`. */
  attach(s: Sequelize): void {
    const manager = (s as any).connectionManager;
    this.live = manager.config.replication.read;
    this.replicas.forEach((r, i) => { r.target = this.live[i]; });
    this.setRotation();
    s.addHook('afterConnect', (connection: object, target: unknown) => {
      const replica = this.replicas.find((r) => r.target === target);
      if (replica) this.targetOf.set(connection, replica);
    });
    const acquire = manager.getConnection.bind(manager);
    manager.getConnection = async (options: any = {}) => {
      if (options.type !== 'SELECT' || options.useMaster) return acquire(options);
      if (!replicaReadsAllowed() || !this.healthyCount) return acquire({ ...options, useMaster: true });
      try {
        return await acquire(options);
      } catch (err) {
        if (!(err instanceof ConnectionError)) throw err;
        void this.checkNow();
        return acquire({ ...options, useMaster: true });
      }
    };
    const close = s.close.bind(s);
    s.close = async () => {
      await this.stop();
      return close();
    };
    void this.checkNow();
    this.timer = setInterval(() => void this.checkNow(), this.options.checkMs);
    this.timer.unref();
  }

  /** Checks every replica (a check already running is joined, not doubled). */
  checkNow(): Promise<void> {
    this.checking ??= Promise.all(this.replicas.map((r) => this.check(r))).then(() => this.setRotation()).finally(() => { this.checking = undefined; });
    return this.checking;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.checking;
    await Promise.all(this.replicas.map(async (r) => {
      await r.monitor?.end().catch(() => r.monitor?.destroy());
      r.monitor = undefined;
    }));
  }

  private async check(r: Replica): Promise<void> {
    let reason: string | null;
    try {
      const { host, port, user, password } = r.address;
      if (!r.monitor) {
        const monitor = await mariadb.createConnection({ host, port, user, password, connectTimeout: this.options.connectTimeoutMs, socketTimeout: Math.max(this.options.checkMs * 5, 5000) });
        // A replica that goes away closes this socket: it leaves the rotation at once, not at the next check.
        monitor.on('error', (err: any) => {
          if (r.monitor !== monitor) return;
          monitor.destroy();
          r.monitor = undefined;
          this.note(r, `unreachable (${err?.code ?? err?.message})`);
          this.setRotation();
        });
        r.monitor = monitor;
      }
      const [status] = await r.monitor.query('SHOW SLAVE STATUS');
      const lag = status?.Seconds_Behind_Master;
      reason = !status ? 'not a replica (SHOW SLAVE STATUS is empty)'
        : lag === null || lag === undefined ? 'replication is stopped'
          : Number(lag) > this.options.maxLagSeconds ? `${lag} s behind the primary` : null;
    } catch (err: any) {
      r.monitor?.destroy();
      r.monitor = undefined;
      reason = `unreachable (${err?.code ?? err?.message})`;
    }
    this.note(r, reason);
  }

  /** Records a replica's state (`reason` null: healthy), logging changes. */
  private note(r: Replica, reason: string | null): void {
    const replica = `${r.address.host}:${r.address.port}`;
    if (reason === null && !r.healthy) logger.info({ replica }, 'Read replica in rotation');
    if (reason !== null && (r.healthy || reason !== r.reason)) logger.warn({ replica, reason }, 'Read replica out of rotation');
    r.healthy = reason === null;
    r.reason = reason ?? '';
  }

  /** Sequelize's read list, edited in place: the healthy replicas (left as it is when none is, as then no read uses it). */
  private setRotation(): void {
    const healthy = this.replicas.filter((r) => r.healthy).map((r) => r.target);
    if (healthy.length) this.live.splice(0, this.live.length, ...healthy);
  }
}
