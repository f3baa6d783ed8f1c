import { Op, QueryTypes, type Transaction } from 'sequelize';
import { currentActor } from '../audit/actor';
import { SlaPlan, SlaPlanSchedule, SlaPlanTarget, TicketPriority } from '../db/models';
import { setRows } from '../db/links';
import { now } from '../db/entity';
import { sequelize } from '../db/sequelize';
import { ValidationError, fieldLabel, invalid } from '../errors';
import { assertNotInFilters } from './filterUse';
import { flagFilter } from '../http/listQuery';
import { loadMany } from '../db/load';
import { nextOrder } from '../db/order';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick, sent } from '../lib/serialize';
import { Joi, MAX_ID, field } from '../lib/validation';
import { formatClockTime, parseClockTime, reachable, weeklyMinutes, type WorkingWindow } from './sla';
import { isTimeZone } from '../lib/timezones';
import { writeCount } from '../db/writes';
import { enqueue } from '../queue/outbox';
import { slaPlanRecomputeJob } from './slaRecompute';
import { auditCascade } from './cascadeAudit';

/**
 * SLA plans (`/api/ticket/slaplan`, beyond the spec): targets per priority, in minutes, for the
 * first reply and the resolution, counted on the calendar clock (`business_hours` 0) or only in
 * the plan's weekly schedule (1), in its time zone (null: the core setting default_timezone).
 *
 *   schedule[<weekday 0 Sunday ... 6 Saturday>][start]=09:00 & [end]=17:00  (end up to 24:00)
 *   targets[<priority id>][first_reply]=60 & [resolution]=480
 *
 * Both replace the stored ones when sent; an empty value clears them. Responses list them as
 * `schedule: [{day, start, end}]` and `targets: [{priority_id, first_reply, resolution}]`.
 * Priority ids are not checked against the priorities here (they are another migration's table).
 */

export const SLA_PLAN_FIELDS = ['id', 'name', 'description', 'enabled', 'business_hours', 'timezone', 'order'] as const;
export const SLA_PLAN_TRANSLATIONS = { type: 'slaplan', key: 'sla_plan_id', fields: ['name', 'description'], multiline: ['description'] } as const;

/** A year of minutes: the largest target. */
export const MAX_TARGET_MINUTES = 525_600;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isBlank = (v: unknown) => v === undefined || v === null || v === '';

/** Keyed entries of a bracket array: `x[3][a]=..` (an object) or a JSON array indexed by key. */
function keyedEntries(value: unknown, name: string, shape: string): Array<[string, unknown]> {
  if (Array.isArray(value)) return value.map((v, i) => [String(i), v] as [string, unknown]).filter(([, v]) => !isBlank(v));
  if (!isObject(value)) throw new Error(`The ${name} must be an array keyed by ${shape}.`);
  return Object.entries(value).filter(([, v]) => !isBlank(v));
}

/** `schedule[<weekday>][start|end]`: one working window per weekday. */
const scheduleInput = () => Joi.any().custom((value) => {
  if (isBlank(value)) return [];
  const windows: WorkingWindow[] = [];
  for (const [key, item] of keyedEntries(value, 'schedule', 'weekday (schedule[1][start]=09:00)')) {
    if (!/^[0-6]$/.test(key)) throw new Error(`The selected schedule.${key} is invalid: weekdays are 0 (Sunday) to 6 (Saturday).`);
    if (!isObject(item)) throw new Error(`The schedule.${key} must have a start and an end (schedule[${key}][start]=09:00).`);
    const times: number[] = [];
    for (const edge of ['start', 'end'] as const) {
      const raw = item[edge];
      if (isBlank(raw)) throw new Error(`The schedule.${key}.${edge} field is required.`);
      const minutes = typeof raw === 'string' ? parseClockTime(raw.trim()) : null;
      if (minutes === null) throw new Error(`The schedule.${key}.${edge} must be a time from 00:00 to 24:00 (HH:MM).`);
      times.push(minutes);
    }
    if (times[0] >= times[1]) throw new Error(`The schedule.${key}.end must be after the start.`);
    windows.push({ day: Number(key), start: times[0], end: times[1] });
  }
  return windows.sort((a, b) => a.day - b.day);
});

export interface TargetInput {
  priority_id: number;
  first_reply: number | null;
  resolution: number | null;
}

function minutesOf(raw: unknown, name: string): number | null {
  if (isBlank(raw)) return null;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*\d{1,7}\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_TARGET_MINUTES) throw new Error(`The ${name} must be a number of minutes from 1 to ${MAX_TARGET_MINUTES}.`);
  return n;
}

/** `targets[<priority id>][first_reply|resolution]` in minutes; a priority with neither is left out. */
const targetsInput = () => Joi.any().custom((value) => {
  if (isBlank(value)) return [];
  const targets: TargetInput[] = [];
  for (const [key, item] of keyedEntries(value, 'targets', 'priority id (targets[3][first_reply]=60)')) {
    if (!/^\d{1,10}$/.test(key) || Number(key) < 1 || Number(key) > MAX_ID) throw new Error(`The selected targets.${key} is invalid.`);
    if (!isObject(item)) throw new Error(`The targets.${key} must have a first_reply or a resolution (targets[${key}][first_reply]=60).`);
    const first = minutesOf(item.first_reply, fieldLabel(`targets.${key}.first_reply`));
    const resolution = minutesOf(item.resolution, fieldLabel(`targets.${key}.resolution`));
    if (first !== null || resolution !== null) targets.push({ priority_id: Number(key), first_reply: first, resolution });
  }
  return targets.sort((a, b) => a.priority_id - b.priority_id);
});

const timezone = () => field.nullable(64).custom((value: string | null) => {
  if (value && !isTimeZone(value)) throw new Error('The timezone must be a valid IANA time zone (e.g. Europe/London).');
  return value;
});

const bodyFields = {
  description: field.multiline(65535),
  timezone: timezone(),
  order: field.order(),
  schedule: scheduleInput(),
  targets: targetsInput(),
};

const COLUMNS = ['name', 'description', 'enabled', 'business_hours', 'timezone', 'order'] as const;

async function replaceSchedule(planId: number, windows: WorkingWindow[], transaction: Transaction, fresh = false) {
  const rows = windows.map((w) => ({ day: w.day, start_minute: w.start, end_minute: w.end }));
  await setRows(SlaPlanSchedule, { plan_id: planId }, ['day', 'start_minute', 'end_minute'], rows, transaction, { fresh });
}

const TARGET_COLUMNS = ['priority_id', 'first_reply', 'resolution'];

async function replaceTargets(planId: number, targets: TargetInput[], transaction: Transaction, fresh = false) {
  const priorities = targets.map((t) => t.priority_id);
  const found = new Set(priorities.length ? (await TicketPriority.findAll({ attributes: ['id'], where: { id: { [Op.in]: priorities } }, transaction })).map((p) => p.id) : []);
  const unknown = priorities.find((id) => !found.has(id));
  if (unknown !== undefined) throw invalid(`targets.${unknown}`);
  await setRows(SlaPlanTarget, { plan_id: planId }, TARGET_COLUMNS, targets as unknown as Array<Record<string, number | null>>, transaction, { fresh });
}

/**
 * Business hours count only inside a schedule: a plan without one would never fall due, and each
 * target must fall due within MAX_SLA_WEEKS of it (a 1-minute week and a year-long target: centuries).
 */
function assertSchedule(businessHours: number, schedule: readonly WorkingWindow[], targets: readonly TargetInput[]): void {
  if (businessHours !== 1) return;
  if (!schedule.length) throw new ValidationError('The schedule field is required when business hours is 1.');
  for (const t of targets) {
    for (const kind of ['first_reply', 'resolution'] as const) {
      const minutes = t[kind];
      if (minutes !== null && !reachable(minutes, schedule)) {
        throw new ValidationError(`The targets.${t.priority_id}.${kind} must fall due within ten years of the plan's business hours (${weeklyMinutes(schedule)} minutes a week).`);
      }
    }
  }
}

export interface SlaPlanRelations {
  schedules: Map<number, SlaPlanSchedule[]>;
  targets: Map<number, SlaPlanTarget[]>;
}

/** Schedules and targets of a page of plans (two queries): for the plans' own responses and a ticket's `slaplan`. */
export async function loadSlaPlanRelations(plans: SlaPlan[]): Promise<SlaPlanRelations> {
  const ids = plans.map((p) => p.id);
  const [schedules, targets] = await Promise.all([
    loadMany(SlaPlanSchedule, 'plan_id', ids, { order: [['plan_id', 'ASC'], ['day', 'ASC']] }),
    loadMany(SlaPlanTarget, 'plan_id', ids, { order: [['plan_id', 'ASC'], ['priority_id', 'ASC']] }),
  ]);
  return { schedules, targets };
}

const TARGET_FIELDS = ['priority_id', 'first_reply', 'resolution'] as const;

/** An SLA plan as its responses show it (and as a ticket embeds it). */
export function serializeSlaPlan(plan: SlaPlan, rel: SlaPlanRelations): Record<string, any> {
  return {
    ...pick(plan, SLA_PLAN_FIELDS),
    schedule: (rel.schedules.get(plan.id) ?? []).map((s) => ({ day: s.day, start: formatClockTime(s.start_minute), end: formatClockTime(s.end_minute) })),
    targets: (rel.targets.get(plan.id) ?? []).map((t) => pick(t, TARGET_FIELDS)),
    created_at: plan.created_at,
    updated_at: plan.updated_at,
  };
}

export const slaPlanResource: ResourceDef<SlaPlan, SlaPlanRelations> = {
  path: '/slaplan',
  model: SlaPlan,
  label: 'SLA plan',
  sortable: ['name', 'order', 'enabled', 'created_at', 'updated_at'],
  filters: { enabled: flagFilter('enabled') },
  translations: SLA_PLAN_TRANSLATIONS,
  createSchema: Joi.object({
    ...bodyFields,
    name: field.string().required(),
    enabled: field.flag().default(1),
    business_hours: field.flag().default(0),
  }),
  updateSchema: Joi.object({ ...bodyFields, name: field.string(), enabled: field.flag(), business_hours: field.flag() }),

  async create(input, { transaction }) {
    const schedule: WorkingWindow[] = input.schedule ?? [];
    assertSchedule(input.business_hours, schedule, input.targets ?? []);
    const plan = await SlaPlan.create({ ...sent(input, COLUMNS), order: input.order ?? (await nextOrder(SlaPlan, transaction)) }, { transaction });
    await replaceSchedule(plan.id, schedule, transaction, true);
    await replaceTargets(plan.id, input.targets ?? [], transaction, true);
    return plan;
  },

  async update(plan, input, { transaction }) {
    const businessHours = input.business_hours ?? plan.business_hours;
    if (businessHours === 1) {
      const [schedule, targets] = await Promise.all([
        input.schedule ?? SlaPlanSchedule.findAll({ where: { plan_id: plan.id }, transaction })
          .then((rows) => rows.map((r) => ({ day: r.day, start: r.start_minute, end: r.end_minute }))),
        input.targets ?? SlaPlanTarget.findAll({ where: { plan_id: plan.id }, transaction })
          .then((rows) => rows.map((r) => ({ priority_id: r.priority_id, first_reply: r.first_reply, resolution: r.resolution }))),
      ]);
      assertSchedule(businessHours, schedule, targets);
    }
    const clockBefore = [plan.business_hours, plan.timezone];
    await plan.update(sent(input, COLUMNS), { transaction });
    const writesBefore = writeCount(transaction);
    if (input.schedule !== undefined) await replaceSchedule(plan.id, input.schedule, transaction);
    if (input.targets !== undefined) await replaceTargets(plan.id, input.targets, transaction);
    // Its tickets' due times follow the new clock or targets (in the background: a plan may hold many).
    if (writeCount(transaction) > writesBefore || plan.business_hours !== clockBefore[0] || plan.timezone !== clockBefore[1]) {
      await enqueue(transaction, slaPlanRecomputeJob, { planId: plan.id, afterId: 0, actor: currentActor() });
    }
  },

  // The plan's tickets lose it and the due times it gave them, as `sla_plan=0` on a ticket does:
  // audited, and a ticket.updated each (auditCascade: set-based audit, events in the background).
  async destroy(plan, { transaction }) {
    await assertNotInFilters('sla_plan', plan.id, 'SLA plan', transaction);
    // Each ticket's entry lists the fields that change: the plan, and the due times it had.
    const due = (c: string) => `IF(k.${c} IS NULL, '', CONCAT(',"${c}":{"before":', k.${c}, ',"after":null}'))`;
    await auditCascade('sla_plan_id', plan.id,
      `CONCAT('{"sla_plan_id":{"before":', k.sla_plan_id, ',"after":null}', ${due('reply_due_time')}, ${due('resolve_due_time')}, ${due('due_time')}, '}')`,
      transaction);
    await sequelize().query(
      'UPDATE tickets SET sla_plan_id = NULL, reply_due_time = NULL, resolve_due_time = NULL, due_time = NULL, updated_at = :now WHERE sla_plan_id = :id',
      { replacements: { id: plan.id, now: now() }, transaction, type: QueryTypes.UPDATE },
    );
    await plan.destroy({ transaction });
  },

  load: (plans) => loadSlaPlanRelations(plans),
  serialize: (plan, rel) => serializeSlaPlan(plan, rel),
};

export const slaPlanRouter = resourceRouter(slaPlanResource);
