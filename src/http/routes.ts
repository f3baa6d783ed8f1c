import type { Router } from 'express';
import type { ObjectSchema } from 'joi';

/**
 * Every route the API serves, recorded where it is declared: method, path, what it validates and
 * the label of its messages. The conventions tests walk it, and an OpenAPI document is generated
 * from it (never written by hand).
 */
export interface RouteRecord {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Express form, `:id` for path parameters; relative to the area until mounted. */
  path: string;
  /** What the route does: `list`, `show`, `create`, `update`, `delete`, a custom action's name, `settings`. */
  action: string;
  label?: string;
  body?: ObjectSchema;
  /** The query string it validates (a list's: PAGING, ordering, DATES, its filters and parameters). */
  query?: ObjectSchema;
  /** Fields that take `<field>:<locale>` translations. */
  translatable?: readonly string[];
  /** The status of a success when it is not 200 (202: a job was queued). */
  status?: number;
  /** The resource declaration behind the route (conventions tests read its shape). */
  resource?: unknown;
}

/** A router that knows the routes it serves. */
export type RecordedRouter = Router & { routes: RouteRecord[] };

export function recorded(router: Router, routes: RouteRecord[]): RecordedRouter {
  return Object.assign(router, { routes });
}

const registry: RouteRecord[] = [];

/** Every mounted route, with its full path (`/api/<area>/...`). */
export const allRoutes = (): readonly RouteRecord[] => registry;

/** Records an area's routers under their mount path (called once per area at import). */
export function mountRoutes(prefix: string, routers: RecordedRouter[]): void {
  for (const r of routers) {
    for (const route of r.routes) {
      const path = `${prefix}${route.path}`;
      if (!registry.some((x) => x.method === route.method && x.path === path)) registry.push({ ...route, path });
    }
  }
}
