import type { Entity } from '../db/entity';
import type { BoundCondition } from '../db/sql';
import { present, type ResourceDef } from '../http/resource';
import { encodeCursor, readChanges, type Position } from './changes';
import type { ExportResource } from './tombstones';

export { cursorExpired, decodeCursor, encodeCursor, startAt, type Position } from './changes';

/**
 * A page of the incremental export (`GET /api/export/{resource}`): the resource's change stream
 * (./changes.ts) after the reader's cursor, its records presented as the API shows them.
 */

export interface ExportSource<M extends Entity = any> {
  resource: ExportResource;
  def: ResourceDef<M, any, any>;
}

export interface ExportPage {
  records: Record<string, unknown>[];
  tombstones: Array<{ id: number; deleted_at: number }>;
  after_cursor: string;
  end_of_stream: boolean;
  end_time: number;
}

export async function readPage(
  source: ExportSource, from: Position, limit: number, grants: (scope: string) => boolean, filter?: BoundCondition,
): Promise<ExportPage> {
  const changes = await readChanges({ resource: source.resource, model: source.def.model, scope: source.def.scope }, from, limit, filter);
  const live = changes.items.filter((i) => i.row).map((i) => i.row!);
  return {
    records: await present(source.def, live as unknown as Entity[], { view: 'show', query: {}, grants }),
    tombstones: changes.items.filter((i) => i.tombstone).map((i) => ({ id: Number(i.tombstone!.record_id), deleted_at: Number(i.tombstone!.deleted_at) })),
    after_cursor: encodeCursor(changes.next, source.resource),
    end_of_stream: changes.endOfStream,
    end_time: changes.endTime,
  };
}
