import { Router, type Request, type RequestHandler } from 'express';
import type { ObjectSchema } from 'joi';
import { Op, type Transaction, type WhereOptions } from 'sequelize';
import type { ModelCtor } from 'sequelize-typescript';
import type { Entity } from '../db/entity';
import { transaction } from '../db/transaction';
import { sendList, sendSuccess } from './envelope';
import { HttpError, NotFoundError } from './errors';
import { LOCALE, parseListQuery, type Filter, type ListSpec } from './listQuery';
import {
  applyTranslations, deleteTranslations, extractTranslations, loadTranslations, saveTranslations,
  type TranslationSpec,
} from './translations';
import { MAX_ID, validate } from './validation';

export type Action = 'list' | 'show' | 'create' | 'update' | 'delete';
export type View = 'list' | 'show' | 'create' | 'update';

export interface ReadContext {
  view: View;
  lang?: string;
}

export interface WriteContext {
  transaction: Transaction;
}

/**
 * A resource, declared: its path, model, label, schemas, filters, sortable columns, serialiser,
 * and hooks for what is special about it. `resourceRouter` turns it into the five endpoints.
 */
export interface ResourceDef<M extends Entity, R = void> {
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
  translations?: TranslationSpec;
  createSchema?: ObjectSchema;
  updateSchema?: ObjectSchema;
  /** Narrows every read and write (two resources sharing one table). */
  scope?: WhereOptions;
  /** Loads what the serialiser embeds, for a whole page at once (a fixed number of queries). */
  load?(records: M[], ctx: ReadContext): Promise<R>;
  serialize(record: M, related: R, ctx: ReadContext): Record<string, any>;
  create?(input: Record<string, any>, ctx: WriteContext): Promise<M>;
  update?(record: M, input: Record<string, any>, ctx: WriteContext): Promise<void>;
  destroy?(record: M, ctx: WriteContext): Promise<void>;
  messages?: { created?: string; updated?: string; deleted?: string };
}

const ALL: readonly Action[] = ['list', 'show', 'create', 'update', 'delete'];

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

/** Serialises records the way the resource's list and show do (also used by other resources). */
export async function present<M extends Entity, R>(def: ResourceDef<M, R>, records: M[], ctx: ReadContext) {
  const related = def.load ? await def.load(records, ctx) : (undefined as R);
  const translations = def.translations ? await loadTranslations(def.translations, records.map((r) => r.id)) : null;
  return records.map((record) => {
    const data = def.serialize(record, related, ctx);
    return def.translations ? applyTranslations(def.translations, data, translations!.get(record.id) ?? [], ctx.lang) : data;
  });
}

export function resourceRouter<M extends Entity, R>(def: ResourceDef<M, R>): Router {
  const router = Router();
  const actions = def.actions ?? ALL;
  const listSpec: ListSpec = { sortable: def.sortable ?? [], filters: def.filters ?? {}, dates: def.dates ?? false };
  const scoped = (where: WhereOptions): WhereOptions => (def.scope ? { [Op.and]: [def.scope, where] } : where);
  const model = def.model as unknown as ModelCtor<Entity> & typeof Entity;

  const find = async (req: Request, transaction?: Transaction): Promise<M> => {
    const id = parseId(req.params.id);
    const record = id === null ? null : await model.findOne({
      where: scoped({ id }), transaction, lock: transaction ? transaction.LOCK.UPDATE : undefined,
    });
    if (!record) throw new NotFoundError(def.label);
    return record as unknown as M;
  };

  const write = <T>(work: (ctx: WriteContext) => Promise<T>) => transaction((t) => work({ transaction: t }));

  const one = async (record: M, view: View, req: Request) => (await present(def, [record], { view, lang: langOf(req) }))[0];

  if (actions.includes('list')) {
    router.get(def.path, async (req, res) => {
      const q = await parseListQuery(listSpec, req.query);
      if (!q.possible) return sendList(res, [], 0);
      const { rows, count } = await model.findAndCountAll({ where: scoped(q.where), order: q.order, offset: q.offset, limit: q.limit });
      const data = await present(def, rows as unknown as M[], { view: 'list', lang: q.lang });
      return sendList(res, data, count);
    });
  }

  if (actions.includes('show')) {
    router.get(`${def.path}/:id`, async (req, res) => {
      const record = await find(req);
      sendSuccess(res, await one(record, 'show', req));
    });
  }

  if (actions.includes('create')) {
    router.post(def.path, async (req, res) => {
      const { body, translations } = extractTranslations(def.translations, req.body);
      const input = def.createSchema ? validate(def.createSchema, body) : {};
      const record = await write(async (ctx) => {
        const created = def.create ? await def.create(input, ctx) : ((await model.create(input, { transaction: ctx.transaction })) as unknown as M);
        if (def.translations && translations.length) await saveTranslations(def.translations, created.id, translations, false, ctx.transaction);
        return created;
      });
      await record.reload();
      sendSuccess(res, await one(record, 'create', req), def.messages?.created ?? `Successfully created new ${def.label}!`);
    });
  }

  if (actions.includes('update')) {
    router.put(`${def.path}/:id`, async (req, res) => {
      await find(req); // 404 before 422: an unknown record is reported as such whatever the body
      const { body, translations } = extractTranslations(def.translations, req.body);
      const input = def.updateSchema ? validate(def.updateSchema, body) : {};
      const record = await write(async (ctx) => {
        const locked = await find(req, ctx.transaction);
        if (def.update) await def.update(locked, input, ctx);
        else await locked.update(input, { transaction: ctx.transaction });
        // The spec: an update carrying at least one translation replaces the stored ones.
        if (def.translations && translations.length) await saveTranslations(def.translations, locked.id, translations, true, ctx.transaction);
        return locked;
      });
      await record.reload();
      sendSuccess(res, await one(record, 'update', req), def.messages?.updated ?? `Successfully updated the ${def.label}!`);
    });
  }

  if (actions.includes('delete')) {
    router.delete(`${def.path}/:id`, async (req, res) => {
      await write(async (ctx) => {
        const record = await find(req, ctx.transaction);
        if (def.destroy) await def.destroy(record, ctx);
        else await record.destroy({ transaction: ctx.transaction });
        if (def.translations) await deleteTranslations(def.translations, record.id, ctx.transaction);
      });
      sendSuccess(res, null, def.messages?.deleted ?? `Successfully deleted the ${def.label}!`);
    });
  }

  // A method the resource does not offer: 405 with the methods it does.
  const allowed = (forItem: boolean) => {
    const methods = forItem
      ? [actions.includes('show') && 'GET', actions.includes('update') && 'PUT', actions.includes('delete') && 'DELETE']
      : [actions.includes('list') && 'GET', actions.includes('create') && 'POST'];
    return methods.filter(Boolean).join(', ');
  };
  const notAllowed = (forItem: boolean): RequestHandler => (req) => {
    const allow = allowed(forItem);
    if (!allow) throw new HttpError(404, `The requested URL ${req.method} ${req.originalUrl.split('?')[0]} was not found.`);
    throw new HttpError(405, `The ${req.method} method is not supported here. Supported methods: ${allow}.`, { Allow: allow });
  };
  router.all(def.path, notAllowed(false));
  router.all(`${def.path}/:id`, notAllowed(true));
  return router;
}
