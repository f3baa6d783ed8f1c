import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Who is making the current change, and through which channel: set where work enters the system
 * (an API request by its token, the mailbox worker by its mailbox, a scheduled job, a bulk job)
 * and read by the ticket service when it writes audit rows. Code outside any of those acts as
 * `system`.
 */
export type ActorType = 'token' | 'operator' | 'user' | 'mailbox' | 'scheduler' | 'job' | 'system';

export interface Actor {
  type: ActorType;
  /** The token's, operator's, user's, mailbox's (department email's) or job's id; null when there is none. */
  id: number | null;
  /** `api`, `email`, `scheduler`, `job`, `system`. */
  channel: string;
}

const storage = new AsyncLocalStorage<Actor>();
const SYSTEM: Actor = { type: 'system', id: null, channel: 'system' };

/** Runs `work` (and everything it awaits) as `actor`. */
export const runAs = <T>(actor: Actor, work: () => T): T => storage.run(actor, work);

export const currentActor = (): Actor => storage.getStore() ?? SYSTEM;
