import type { QueryInterface } from 'sequelize';

export const name = '040_event_created_at';

/**
 * The event feed's gap check reads the events of the last seconds (src/core/event.ts): by a range
 * of this index, not a walk of every event after a reader's cursor (all of them, for a reader
 * starting at 0).
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.addIndex('events', ['created_at'], { name: 'events_created_at' });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.removeIndex('events', 'events_created_at');
}
