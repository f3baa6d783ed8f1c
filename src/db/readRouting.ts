import { AsyncLocalStorage } from 'node:async_hooks';
import { config } from '../config';

/**
 * Whether the reads of the work in hand may go to a read replica (db/replicas.ts). Everything
 * reads from the primary unless it runs inside `readsFromReplica`: the GET requests of a client
 * that wrote nothing lately (http/readRouting.ts) and worker work that only reads and tolerates
 * a few seconds of lag. So a context lost on the way (a callback outside the request's async
 * chain) costs a replica read, never a stale one. Transactions always use the primary (Sequelize
 * sends a transaction's statements over the connection it began on, which is a primary one).
 */
const replicaAllowed = new AsyncLocalStorage<boolean>();

// Without replicas every read is the primary's: nothing to keep. (A storage, once used, costs a
// hook on every promise of the process, replica or not.)
const routed = () => config().database.replicas.length > 0;

export const readsFromReplica = <T>(work: () => T): T => (routed() ? replicaAllowed.run(true, work) : work());

/** For reads whose result outlives the work (a cache entry stored under a version): never stale. */
export const readsFromPrimary = <T>(work: () => T): T => (routed() ? replicaAllowed.run(false, work) : work());

export const replicaReadsAllowed = (): boolean => replicaAllowed.getStore() === true;
