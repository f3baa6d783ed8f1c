import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { ObjectSchema, Schema } from 'joi';
import { Op, type Transaction, type WhereOptions } from 'sequelize';
import type { ModelCtor } from 'sequelize-typescript';
import { now, type Entity } from '../db/entity';
import { transaction } from '../db/transaction';
import { writeCount } from '../db/writes';
import { sendList, sendSuccess } from './envelope';
import { grantsOf } from './auth';
import { MethodNotAllowedError, UrlNotFoundError } from './errors';
import { NotFoundError, invalid } from '../errors';
import { langParam, listSchema, narrowingParams, parseListQuery, validateQuery, type Condition, type Filter, type ListQuery, type ListSpec } from './listQuery';
import { recorded, type RecordedRouter, type RouteRecord } from './routes';
import { afterRecord, countBy, loadPage, loadRows, readBack, recordById } from '../db/load';
import { countRecords, type CountedKind } from '../db/recordCounts';
import { isBound, type BoundCondition } from '../db/sql';
import {
  deleteTranslations, extractTranslations, loadTranslations, saveTranslations, translate, type TranslationSpec,
} from '../translations';
import { flat } from '../lib/flatString';
import { Joi, LOCALE, MAX_ID, validate } from '../lib/validation';

export type Action = 'list' | 'show' | 'create' | 'update' | 'delete';
export type View = 'list' | 'show' | 'create' | 'update';

export interface ReadContext {
  view: View;
  lang?: string;
  /** The request's validated query parameters (a list's filters and params, a show's `query`). */
  query: Record<string, any>;
  /** Whether the request's token grants a scope (`core:read`): embedded records of another area show their secrets only then. */
  grants: (scope: string) => boolean;
}

export interface WriteContext {
  transaction: Transaction;
  /** A sub-resource's parent record (named in the path), share-locked for the transaction. */
  parent?: Entity;
  /**
   * On update: the transaction's `writeCount` (db/writes.ts) before anything of the update was
   * written, translations included; an update that wrote nothing since emits no `*.updated` event.
   */
  writesBefore?: number;
  /**
   * Whether the request's token grants a scope beyond the one its path needed (a write that
   * reaches into administration: a department's deletion takes its mailboxes). Absent: full access.
   */
  grants?: (scope: string) => boolean;
}

/**
 * The record of another resource that a sub-resource's records belong to, named in the path:
 * `/department/:department/email/:id`. An unknown parent is a 404 with the parent's label; every
 * read and write is narrowed to the parent's records (`column` = its id), and a create sets it.
 */
export interface ParentSpec {
  model: ModelCtor<Entity>;
  label: string;
  /** The path parameter of the parent id (`department` in `/department/:department/email`). */
  param: string;
  /** The column of the child that holds the parent id. */
  column: string;
  /** Narrows the parent (a ticket custom field, not a user one sharing its table): column equalities. */
  scope?: Record<string, string | number>;
}

export interface ListPageInput {
  query: ListQuery;
  where: WhereOptions;
  replacements: Record<string, unknown>;
  /** Whether filters or an override narrow the list (besides `listScope`). */
  filtered: boolean;
  /** ListInstead's `within`: its condition is in `where`; listPage counts by it (a count from the parameters alone would miss it). */
  within?: ListWithin;
}

/**
 * listOverride's answer that the list is that of other query parameters (ResourceDef.listOverride),
 * `within` the records of a condition besides, when there is one.
 */
export interface ListInstead {
  instead: Record<string, unknown>;
  within?: ListWithin;
}

/** Records a list is narrowed to besides its parameters: the condition, and what the resource's listPage counts them by (its own). */
export interface ListWithin {
  condition: BoundCondition;
  [k: string]: unknown;
}

const isInstead = (o: unknown): o is ListInstead => typeof o === 'object' && o !== null && 'instead' in o;

/** A page of records and the total that matches: a custom action's answer in the list envelope (with `count`). */
export interface ListResult<M> {
  rows: M[];
  count: number;
}

const isListResult = <M>(r: unknown): r is ListResult<M> =>
  typeof r === 'object' && r !== null && !Array.isArray(r) && Array.isArray((r as ListResult<M>).rows) && typeof (r as ListResult<M>).count === 'number';

/** A where without any condition: `{}`, or an `Op.and` of nothing. */
function isEmptyWhere(where: unknown): boolean {
  if (where === undefined || where === null) return true;
  if (typeof where !== 'object') return false;
  const keys = [...Object.keys(where), ...Object.getOwnPropertySymbols(where)];
  if (keys.length === 0) return true;
  if (keys.length === 1 && keys[0] === Op.and) {
    const all = (where as Record<symbol, unknown>)[Op.and];
    return Array.isArray(all) && all.every(isEmptyWhere);
  }
  return false;
}

/**
 * An action beyond the five CRUD ones (merge, forward, increment views...), declared like them: it
 * reuses the resource's find (and row lock), validation, transaction and presenter.
 */
export interface CustomAction<M extends Entity> {
  /** Names the action in route records and the OpenAPI document. */
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Relative to the resource's path: `/:id/merge` acts on a record, `/search` on the collection. */
  path: string;
  /** Validates the body (writes) or the query string (GET). */
  schema?: ObjectSchema;
  /**
   * The work. `record` is the record named by `:id` (locked for writes); a write runs in the
   * request's transaction. Returns the record(s) to present, `undefined` for `data: null`, or a
   * `ListResult` (a search) for the list envelope with `count`.
   */
  run(ctx: { record?: M; input: Record<string, any>; transaction?: Transaction; req: Request }): Promise<M | M[] | ListResult<M> | void>;
  /** The view the result is presented in (default `show`). */
  view?: View;
  /** Present one record as an array of one (the shape some of the spec's samples have). */
  asArray?: boolean;
  message?: string;
  /**
   * A POST that writes nothing of its own (a dry run): it runs outside a request transaction, and
   * what it returns (possibly an unsaved record) is presented as it is, not reloaded.
   */
  writesNothing?: boolean;
}

/**
 * What a create may return instead of the bare record: the record as written, which is then
 * presented as it is (not read back: the create vouches that it holds every column as stored),
 * and what the create knows of its relations (`known`, handed to `load`, which reads none of it).
 */
export class Written<M, K> {
  constructor(readonly record: M, readonly known: K) {}
}

/** Record counters that answer a list's count (ResourceDef.counted). */
export interface Counting { kind: CountedKind; scopeFilter?: string; byValue?: readonly string[] }

/**
 * A resource, declared: its path, model, label, schemas, filters, sortable columns, presenter,
 * and hooks for what is special about it. `resourceRouter` turns it into its endpoints.
 */
export interface ResourceDef<M extends Entity, R = void, K = never> {
  path: string;
  model: ModelCtor<M>;
  /** The noun in messages: `Successfully created new <label>!`, `The <label> with given ID was not found.` */
  label: string;
  actions?: readonly Action[];
  /** Columns `order_column` may name, besides `id`. */
  sortable?: readonly string[];
  filters?: Record<string, Filter>;
  /** The DATES filters. */
  dates?: boolean;
  /** Query parameters of the list besides filters, PAGING and DATES; read them in `listScope` or `ctx.query`. */
  listParams?: Record<string, Schema>;
  /** Query parameters of show (`ctx.query`). */
  showQuery?: ObjectSchema;
  translations?: TranslationSpec;
  createSchema?: ObjectSchema;
  updateSchema?: ObjectSchema;
  /** Narrows every read and write (two resources sharing one table): column equalities. */
  scope?: Record<string, string | number>;
  /**
   * The list's `count` from the record counters of this kind (src/db/recordCounts.ts) when nothing
   * narrows it but the filter named `scopeFilter` (the id of the counters' scope, a brand) and at
   * most one of `byValue` (filters whose values are counted apart: migration 066): a sum of a few
   * rows, where a COUNT reads every match. A sub-resource's list is counted in its parent's scope
   * (a webhook's deliveries). Any other filter, or two of `byValue`, counts its matches. Several:
   * the first that answers the list's parameters (all comments, or one article's).
   */
  counted?: Counting | readonly Counting[];
  /**
   * The list's count as a statement of the resource's own (`SELECT <expression> AS count`), for
   * parameters whose matches it counts without reading them all (the mail log's statuses: the
   * counters less the few entries of the other statuses, in one snapshot); undefined for the
   * others, which `counted` or a COUNT of the matches answer. Not for a sub-resource's list.
   */
  countStatement?(params: Record<string, any>): BoundCondition | undefined;
  /**
   * The list's page and count run without index merge intersections: for a table whose filters
   * each have an index of their own and, together, one that holds them with the list's orders.
   * Given two or three such filters of many rows each, the optimiser intersected their own
   * indexes row by row and sorted every match, where the composite index reads a page's worth.
   */
  noIndexIntersections?: boolean;
  /**
   * Indexes the list's page never reads its order from, for these parameters: those a filter's
   * own index orders better. Given a filter whose matches are the newest records, the optimiser
   * walked the primary key (or another index in its order) from the oldest, expecting matches
   * spread over it, and read every older record to find a page.
   */
  notForOrder?(params: Record<string, any>): readonly string[];
  /**
   * The list's matches for these parameters as parts no record is in two of, each the records of
   * one index range (a FROM clause ending in its WHERE, the model under its name, the list's scope
   * and filters in it): the page is read from each part apart and merged (PageOptions.parts), so
   * it reads the parts, however many records lie between their matches in the list's order;
   * undefined where the page is read by the list's condition. For a condition of few matches that
   * no index holds in the list's orders (the mail log's statuses but `sent`): read by its
   * condition, the optimiser walked the order's index from one end, past every other record.
   * Not for a sub-resource's list.
   */
  pageParts?(params: Record<string, any>): readonly BoundCondition[] | undefined;
  /**
   * Columns that list and show never read: never presented, and kept for other work (the text a
   * search index reads, a password's hash), so a page does not carry them from the database.
   */
  unread?: readonly string[];
  /** Makes this a sub-resource of one record of another resource. */
  parent?: ParentSpec;
  /**
   * Narrows show by its validated query (a filter only the given operator may see): a record
   * outside the condition is a 404. A subquery condition (`sqlCondition`) is allowed; undefined
   * leaves show as it is.
   */
  showScope?(query: Record<string, any>): Condition | undefined | Promise<Condition | undefined>;
  /**
   * A default condition of the list only, from its parameters (trashed tickets left out unless
   * asked for; a filter that reads two parameters). May be a subquery with bound values.
   */
  listScope?(params: Record<string, any>): Condition | null;
  /**
   * A list parameter that stands for all the filters when given (a saved ticket filter: "when
   * set, all other filters are ignored"): the condition returned replaces those of the filters
   * and DATES; PAGING, order and `listScope` still apply. Undefined: the filters apply as usual;
   * null: nothing matches. May be a subquery with bound values. `{ instead }`: the list of those
   * query parameters (validated again), as if they had been given.
   */
  listOverride?(params: Record<string, any>): Promise<Condition | null | undefined | ListInstead>;
  /**
   * Reads a page and its `count` itself (the ticket list's plans: counters, index hints, a
   * deferred join) instead of `findAndCountAll`; `where` holds the filters (or the override) and
   * `listScope`, `filtered` whether any filter or override applies.
   */
  listPage?(page: ListPageInput): Promise<ListResult<M>>;
  /**
   * Loads what the presenter embeds, for a whole page at once (a fixed number of queries);
   * `known`: what a create knew of its record's relations (by record id), not to be read again.
   */
  load?(records: M[], ctx: ReadContext, known?: ReadonlyMap<number, K>): Promise<R>;
  serialize(record: M, related: R, ctx: ReadContext): Record<string, any>;
  create?(input: Record<string, any>, ctx: WriteContext): Promise<M | Written<M, K>>;
  update?(record: M, input: Record<string, any>, ctx: WriteContext): Promise<void>;
  /** Runs after a create or update has saved everything, translations included (derived data). */
  afterWrite?(record: M, ctx: WriteContext): Promise<void>;
  destroy?(record: M, ctx: WriteContext): Promise<void>;
  custom?: CustomAction<M>[];
  messages?: { created?: string; updated?: string; deleted?: string };
}

const ALL: readonly Action[] = ['list', 'show', 'create', 'update', 'delete'];

/**
 * The messages of a resource's writes as the spec words them, unless it words its own: made once
 * per resource, as flat strings (a template literal made a new rope for every response, which
 * takes the whole body's JSON.stringify off its fast path: src/lib/flatString.ts).
 */
export function writeMessages(label: string, own: ResourceDef<any, any, any>['messages'] = {}): { created: string; updated: string; deleted: string } {
  return {
    created: own.created ?? flat('Successfully created new ', label, '!'),
    updated: own.updated ?? flat('Successfully updated the ', label, '!'),
    deleted: own.deleted ?? flat('Successfully deleted the ', label, '!'),
  };
}

/** A path id: digits only and in range, or null (an unknown record, not a malformed request). */
export function parseId(raw: unknown): number | null {
  if (typeof raw !== 'string' || !/^\d{1,10}$/.test(raw)) return null;
  const n = Number(raw);
  return n >= 1 && n <= MAX_ID ? n : null;
}

export function langOf(req: Request): string | undefined {
  const lang = req.query.lang;
  return typeof lang === 'string' && LOCALE.test(lang) ? lang : undefined;
}

/**
 * The parameters of a write: the body, and the query string under it (the body wins on a clash),
 * as the Laravel application behind the spec reads them; some clients send everything in the query.
 */
export function inputOf(req: Request): Record<string, unknown> {
  const query = (req.query ?? {}) as Record<string, unknown>;
  return { ...query, ...(req.body as Record<string, unknown>) };
}

/** Presents records the way the resource's list and show do (also for records embedded elsewhere). */
export async function present<M extends Entity, R, K>(def: ResourceDef<M, R, K>, records: M[], ctx: ReadContext, known?: ReadonlyMap<number, K>) {
  // An empty page embeds nothing: no relations, translations or configuration to gather for it.
  if (!records.length) return [];
  const related = def.load ? await def.load(records, ctx, known) : (undefined as R);
  const translations = def.translations ? await loadTranslations(def.translations, records.map((r) => r.id)) : null;
  return records.map((record) => {
    const data = def.serialize(record, related, ctx);
    return def.translations ? translate(def.translations, data, translations!.get(record.id) ?? [], ctx.lang) : data;
  });
}

export function resourceRouter<M extends Entity, R, K = never>(def: ResourceDef<M, R, K>): RecordedRouter {
  const router = Router();
  const routes: RouteRecord[] = [];
  const actions = def.actions ?? ALL;
  const messages = writeMessages(def.label, def.messages);
  const listSpec: ListSpec = { sortable: def.sortable ?? [], filters: def.filters ?? {}, dates: def.dates ?? false, params: def.listParams, keyset: true };
  /**
   * The list's count from the counters (ResourceDef.counted) when its parameters narrow it by
   * nothing else (of a sub-resource: within its parent), else undefined.
   */
  const countedList = ({ kind, scopeFilter, byValue = [] }: Counting, params: Record<string, any>, parent: Entity | undefined): Promise<number> | undefined => {
    const narrowing = narrowingParams(listSpec).filter((k) => params[k] !== undefined && params[k] !== null);
    const scoped = !parent && scopeFilter !== undefined && narrowing.includes(scopeFilter);
    const scope = parent ? parent.id : scoped ? Number(params[scopeFilter!]) : undefined;
    const rest = scoped ? narrowing.filter((k) => k !== scopeFilter) : narrowing;
    if (!rest.length) return countRecords(kind, scope);
    const [filter] = rest;
    const value = params[filter];
    if (rest.length > 1 || !byValue.includes(filter) || (typeof value !== 'string' && typeof value !== 'number')) return undefined;
    return countRecords(kind, scope, { filter, value: String(value) });
  };
  const model = def.model as unknown as ModelCtor<Entity> & typeof Entity;
  // What list and show read: every attribute but the unread ones (undefined: every attribute).
  // Found at the first read: the router is built before the models are.
  let readList: string[] | undefined;
  const read = () => (def.unread?.length ? (readList ??= Object.keys(model.getAttributes()).filter((n) => !def.unread!.includes(n))) : undefined);
  const parentModel = def.parent?.model as unknown as (ModelCtor<Entity> & typeof Entity) | undefined;

  /** The parent named in the path (share-locked inside a transaction), or a 404 with its label. */
  const findParent = async (req: Request, transaction?: Transaction): Promise<Entity | undefined> => {
    if (!def.parent || !parentModel) return undefined;
    const id = parseId(req.params[def.parent.param]);
    const found = id === null ? null : await recordById(parentModel, id, { transaction, lock: transaction ? 'share' : undefined, where: def.parent.scope });
    if (!found) throw new NotFoundError(def.parent.label);
    return found;
  };

  /** The resource's scope and its parent's records only: the column equalities every read and write adds. */
  const narrowing = (parent?: Entity): Record<string, string | number> =>
    (def.parent && parent ? { ...def.scope, [def.parent.column]: parent.id } : { ...def.scope });
  const scoped = (where: WhereOptions, parent?: Entity): WhereOptions => {
    const n = narrowing(parent);
    return Object.keys(n).length ? { [Op.and]: [n, where] } : where;
  };
  const showQuery = def.showQuery ?? Joi.object({ lang: langParam() });
  const record = (route: Omit<RouteRecord, 'label' | 'resource'>) => routes.push({ ...route, label: def.label, resource: def });

  /**
   * The record named by `:id` (locked when inside a transaction), or a 404 with the resource's
   * label. `plain` (outside a transaction) reads a plain row instead of a model instance, for a show
   * that only presents it; both through the loaders' statement built once (db/load.ts), not `findOne`.
   */
  const locate = async (req: Request, transaction?: Transaction, plain = false): Promise<{ record: M; parent?: Entity }> => {
    const parent = await findParent(req, transaction);
    const id = parseId(req.params.id);
    const found = id === null
      ? null
      : plain
        ? (await loadRows(model, 'id', [id], { where: narrowing(parent), attributes: read() }))[0]
        // Outside a transaction the record is only presented (a custom GET action's): without the unread columns.
        : await recordById(model, id, { transaction, lock: transaction ? 'update' : undefined, where: narrowing(parent), attributes: transaction ? undefined : read() });
    if (!found) throw new NotFoundError(def.label);
    return { record: found as unknown as M, parent };
  };
  const find = async (req: Request, transaction?: Transaction): Promise<M> => (await locate(req, transaction)).record;

  /**
   * The request's input as `check` validates it, or its error; but a 404 first when `exists`
   * finds no record (the one named, or the parent): an unknown record is reported as such
   * whatever the body. Existence is read only for a refused input: a valid one goes on to the
   * write, whose transaction reads the record (and answers 404) itself.
   */
  const checkedFor = async <T>(exists: () => Promise<unknown>, check: () => T): Promise<T> => {
    try {
      return check();
    } catch (err) {
      await exists();
      throw err;
    }
  };

  /**
   * A write in a transaction. The record it returns is read back inside the same transaction (it
   * is locked there), so a delete racing the update cannot make the answer fail. A `Written` is
   * not read back: its create vouches for it. The row read back goes into the instance itself
   * (readBack), which is not replaced: a presenter may key what only this response shows by it (a
   * webhook's new secret).
   */
  const write = <T extends M | M[] | Written<M, K> | void>(work: (t: Transaction) => Promise<T>) => transaction(async (t) => {
    const result = await work(t);
    if (!(result instanceof Written)) for (const r of Array.isArray(result) ? result : result ? [result] : []) await readBack(r as M, t);
    return result;
  });

  /** `known`: what a create knows of the records' relations (Written), handed to `present`. */
  const respond = async (
    req: Request, res: Response, result: M | M[] | ListResult<M> | void, view: View, message: string | null, asArray = false, query: Record<string, any> = {},
    known?: Map<number, K>,
  ) => {
    if (!result) return sendSuccess(res, null, message);
    const ctx = { view, lang: langOf(req), query, grants: grantsOf(res) };
    if (isListResult<M>(result)) return sendList(res, await present(def, result.rows, ctx), result.count);
    const data = await present(def, Array.isArray(result) ? result : [result], ctx, known);
    return sendSuccess(res, Array.isArray(result) || asArray ? data : data[0], message);
  };

  if (actions.includes('list')) {
    record({ method: 'GET', path: def.path, action: 'list', query: listSchema(listSpec) });
    router.get(def.path, async (req, res) => {
      const parent = await findParent(req);
      let q = await parseListQuery(listSpec, req.query);
      let override = def.listOverride ? await def.listOverride(q.params) : undefined;
      let within: ListWithin | undefined;
      if (isInstead(override)) {
        q = await parseListQuery(listSpec, override.instead);
        within = override.within;
        override = undefined;
        if (within) {
          q.where = { [Op.and]: [q.where, within.condition.literal as WhereOptions] };
          q.replacements = { ...q.replacements, ...within.condition.replacements };
        }
      }
      const base = def.listScope?.(q.params);
      if (override !== undefined) {
        if (override === null) return sendList(res, [], 0);
        q.possible = true;
        q.where = isBound(override) ? (override.literal as WhereOptions) : override;
        q.replacements = isBound(override) ? override.replacements : {};
      }
      if (!q.possible || base === null) return sendList(res, [], 0);
      const replacements = isBound(base) ? { ...q.replacements, ...base.replacements } : q.replacements;
      const where = base ? { [Op.and]: [isBound(base) ? (base.literal as WhereOptions) : base, q.where] } : q.where;
      if (def.listPage && !parent) {
        const page = await def.listPage({ query: q, where, replacements, filtered: override !== undefined || !isEmptyWhere(q.where), within });
        return sendList(res, await present(def, page.rows, { view: 'list', lang: q.lang, query: q.params, grants: grantsOf(res) }), page.count);
      }
      // Plain rows, not model instances: a page is only presented, and building instances was
      // one of the largest costs of a list (see docs/performance.md).
      const byParams = base === undefined && override === undefined;
      const own = byParams && !parent ? def.countStatement?.(q.params) : undefined;
      const counted = own ? countBy(own) : def.counted && byParams
        ? [def.counted].flat().reduce<Promise<number> | undefined>((found, c) => found ?? countedList(c, q.params, parent), undefined) : undefined;
      // `after_id`: the page after that record of the list's scope (filtered out since or not), in
      // the list's order; `count` stays the list's.
      const [[column, direction]] = q.order as Array<[string, string]>;
      const after = q.params.after_id === undefined ? undefined : await afterRecord(model, column, direction === 'DESC', q.params.after_id, narrowing(parent));
      if (after === null) throw invalid('after_id');
      const { rows, count } = await loadPage(model, {
        where: scoped(where, parent), order: q.order as Array<[string, string]>, offset: q.offset, limit: q.limit, replacements, attributes: read(), count: counted, after,
        noIntersections: def.noIndexIntersections, notForOrder: def.notForOrder?.(q.params), parts: byParams && !parent ? def.pageParts?.(q.params) : undefined,
      });
      return sendList(res, await present(def, rows as unknown as M[], { view: 'list', lang: q.lang, query: q.params, grants: grantsOf(res) }), count);
    });
  }

  // Custom actions before the CRUD item routes, and static paths before parameters, so that
  // `/search` is never read as the id of a show.
  const custom = [...(def.custom ?? [])].sort((a, b) => Number(a.path.includes(':')) - Number(b.path.includes(':')));
  for (const action of custom) {
    const path = `${def.path}${action.path}`;
    const onRecord = action.path.includes(':id');
    const reads = action.method === 'GET';
    record({ method: action.method, path, action: action.name, ...(reads ? { query: action.schema } : { body: action.schema }) });
    router[action.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete'](path, async (req, res) => {
      const presents = reads || action.writesNothing;
      const found = onRecord && presents ? await find(req) : undefined; // 404 before 422
      const check = () => (!action.schema ? {} : reads ? validateQuery(action.schema, req.query) : validate(action.schema, inputOf(req)));
      const input = onRecord && !presents ? await checkedFor(() => find(req), check) : check();
      const result = presents
        ? await action.run({ record: found, input, req })
        : await write(async (t) => {
          const done = await action.run({ record: onRecord ? await find(req, t) : undefined, input, transaction: t, req });
          return isListResult<M>(done) ? done.rows : done;
        });
      await respond(req, res, result, action.view ?? 'show', action.message ?? null, action.asArray, reads ? input : {});
    });
  }

  if (actions.includes('show')) {
    record({ method: 'GET', path: `${def.path}/:id`, action: 'show', query: showQuery });
    router.get(`${def.path}/:id`, async (req, res) => {
      const { record: found } = await locate(req, undefined, true);
      const query = validateQuery(showQuery, req.query);
      const condition = await def.showScope?.(query);
      if (condition !== undefined) {
        const where = { [Op.and]: [{ id: found.id }, isBound(condition) ? condition.literal : condition] } as WhereOptions;
        const visible = await model.findOne({ attributes: ['id'], where, replacements: isBound(condition) ? condition.replacements : undefined });
        if (!visible) throw new NotFoundError(def.label);
      }
      await respond(req, res, found, 'show', null, false, query);
    });
  }

  if (actions.includes('create')) {
    record({ method: 'POST', path: def.path, action: 'create', body: def.createSchema, translatable: def.translations?.fields });
    router.post(def.path, async (req, res) => {
      const { input, translations } = await checkedFor(() => findParent(req), () => {
        const { body, translations: given } = extractTranslations(def.translations, inputOf(req));
        return { input: def.createSchema ? validate(def.createSchema, body) : {}, translations: given };
      });
      const made = await write(async (t) => {
        const parent = await findParent(req, t);
        const values = def.parent && parent ? { ...input, [def.parent.column]: parent.id } : input;
        const result = def.create ? await def.create(values, { transaction: t, parent, grants: grantsOf(res) }) : ((await model.create(values, { transaction: t })) as unknown as M);
        const record = result instanceof Written ? result.record : result;
        if (def.translations && translations.length) await saveTranslations(def.translations, record.id, translations, false, t);
        if (def.afterWrite) await def.afterWrite(record, { transaction: t });
        return result;
      });
      const created = made instanceof Written ? made.record : made;
      const known = made instanceof Written ? new Map([[created.id, made.known]]) : undefined;
      await respond(req, res, created, 'create', messages.created, false, {}, known);
    });
  }

  if (actions.includes('update')) {
    record({ method: 'PUT', path: `${def.path}/:id`, action: 'update', body: def.updateSchema, translatable: def.translations?.fields });
    router.put(`${def.path}/:id`, async (req, res) => {
      const { input, translations, translationsSent } = await checkedFor(() => find(req), () => {
        const { body, translations: given, sent } = extractTranslations(def.translations, inputOf(req));
        return { input: def.updateSchema ? validate(def.updateSchema, body) : {}, translations: given, translationsSent: sent };
      });
      const updated = await write(async (t) => {
        const { record: locked, parent } = await locate(req, t);
        const writesBefore = writeCount(t);
        // The spec: an update carrying at least one translation replaces the stored ones.
        if (def.translations && translationsSent) await saveTranslations(def.translations, locked.id, translations, true, t);
        if (def.update) await def.update(locked, input, { transaction: t, parent, writesBefore, grants: grantsOf(res) });
        else await locked.update(input, { transaction: t });
        // An update that changed only related rows (groups, phones, translations) is an edit too;
        // one that wrote nothing (every value as stored) changed nothing, and one that saved the
        // record this second has stamped it already.
        const at = now();
        const stamped = !locked.changed('updated_at' as any) && Number(locked.get('updated_at' as any)) >= at;
        if ('updated_at' in model.getAttributes() && !stamped && writeCount(t) > writesBefore) {
          await model.update({ updated_at: at } as any, { where: { id: locked.id } as WhereOptions, transaction: t, hooks: false });
        }
        if (def.afterWrite) await def.afterWrite(locked, { transaction: t });
        return locked;
      });
      await respond(req, res, updated, 'update', messages.updated);
    });
  }

  if (actions.includes('delete')) {
    record({ method: 'DELETE', path: `${def.path}/:id`, action: 'delete' });
    router.delete(`${def.path}/:id`, async (req, res) => {
      await write(async (t) => {
        const { record: found, parent } = await locate(req, t);
        if (def.destroy) await def.destroy(found, { transaction: t, parent, grants: grantsOf(res) });
        else await found.destroy({ transaction: t });
        if (def.translations) await deleteTranslations(def.translations, found.id, t);
      });
      sendSuccess(res, null, messages.deleted);
    });
  }

  // A method the route does not offer: 405 with the methods it does.
  const allowedAt = (path: string) => [...new Set(routes.filter((r) => r.path === path).map((r) => r.method))].join(', ');
  const notAllowed = (path: string): RequestHandler => (req) => {
    const allow = allowedAt(path);
    if (!allow) throw new UrlNotFoundError(req.method, req.originalUrl);
    throw new MethodNotAllowedError(req.method, allow);
  };
  for (const path of new Set([def.path, `${def.path}/:id`, ...routes.map((r) => r.path)])) router.all(path, notAllowed(path));
  return recorded(router, routes);
}
