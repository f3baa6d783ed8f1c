import type { Transaction } from 'sequelize';
import {
  CannedResponse, CannedResponseGroup, CannedResponseTag, Department, Group, TicketPriority, TicketStatus, TicketTag, User,
} from '../db/models';
import { setLinks } from '../db/links';
import { ValidationError } from '../errors';
import { assertExist } from '../db/exists';
import { loadLinked } from '../db/load';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';
import { CANNED_RESPONSE_TRANSLATIONS } from './privateResponses';
import { Joi, field } from '../lib/validation';
import { OPERATOR_GROUP_FIELDS } from '../user/groupFields';
import { serializeTag, tagsByName } from './tag';
import { richText } from '../content/html';

/**
 * Canned responses: a name and a text with merge fields (`{{ user.firstname }}`, kept exactly as
 * written: the API never renders them), tags by name, and who may use them (public or its
 * operator only; the operator groups of `groups`, or every group).
 */

/** Show, create and update. */
export const CANNED_RESPONSE_FIELDS = ['id', 'name', 'text', 'user_id', 'public', 'all_groups', 'created_at', 'updated_at'] as const;
/** List items (the spec's other shape: tags as a string of names). */
export const CANNED_RESPONSE_LIST_FIELDS = [
  'id', 'name', 'text', 'category_id', 'user_id', 'all_groups', 'department_id', 'priority_id', 'status_id', 'created_at', 'updated_at',
] as const;

/** Text kept as written (merge fields, spacing), HTML through the allow-list (content/html.ts); blank is missing. */
const text = () => richText(1_000_000, { trim: false });

const fields = {
  tag: Joi.array().items(field.string()).single().max(100).allow('', null),
  groups: field.idArray().allow('', null),
  public: field.flag(),
  user_id: field.id().allow('', null),
  department_id: field.id().allow('', null),
  priority_id: field.id().allow('', null),
  status_id: field.id().allow('', null),
};

async function replaceTags(responseId: number, names: string[], transaction: Transaction) {
  const tags = await tagsByName(names, transaction);
  await setLinks(CannedResponseTag, { response_id: responseId }, 'tag_id', tags.map((t) => t.id), transaction);
}

const replaceGroups = (responseId: number, ids: number[], transaction: Transaction) =>
  setLinks(CannedResponseGroup, { response_id: responseId }, 'group_id', ids, transaction);

/** Checks the ids an input names (operator, operator groups, department, priority, status). */
async function checkReferences(input: Record<string, any>, transaction: Transaction) {
  await assertExist(User, 'user_id', input.user_id, transaction, { type: 'operator' });
  await assertExist(Group, 'groups', input.groups ?? [], transaction, { type: 'operator' });
  await assertExist(Department, 'department_id', input.department_id, transaction);
  await assertExist(TicketPriority, 'priority_id', input.priority_id, transaction);
  await assertExist(TicketStatus, 'status_id', input.status_id, transaction);
}

/**
 * The owner a response has: a private one (`public` 0) belongs to one operator, who must be named;
 * a public one to no one (making a response public clears its owner; naming one with it is refused).
 */
function ownerOf(publicFlag: number, userId: number | null, named: boolean): number | null {
  if (publicFlag === 0 && !userId) throw new ValidationError('The user id field is required when public is 0.');
  if (publicFlag === 1 && userId && named) throw new ValidationError('The user id field is prohibited when public is 1.');
  return publicFlag === 1 ? null : userId;
}

const COLUMNS = ['name', 'text', 'public', 'user_id', 'department_id', 'priority_id', 'status_id'] as const;

function columns(input: Record<string, any>) {
  const out: Record<string, any> = {};
  for (const k of COLUMNS) if (input[k] !== undefined) out[k] = input[k];
  // An empty `groups` means every operator group.
  if (input.groups !== undefined) out.all_groups = input.groups?.length ? 0 : 1;
  return out;
}

interface Related {
  tags: Map<number, TicketTag[]>;
  groups?: Map<number, Group[]>;
}

export const cannedResponseResource: ResourceDef<CannedResponse, Related> = {
  path: '/cannedresponse',
  model: CannedResponse,
  label: 'canned response',
  sortable: ['name', 'user_id', 'category_id', 'department_id', 'priority_id', 'status_id', 'created_at', 'updated_at'],
  translations: CANNED_RESPONSE_TRANSLATIONS,
  createSchema: Joi.object({ name: field.string().required(), text: text().required(), ...fields, public: field.flag().default(1) }),
  updateSchema: Joi.object({ name: field.string(), text: text(), ...fields }),

  async create(input, { transaction }) {
    await checkReferences(input, transaction);
    ownerOf(input.public, input.user_id ?? null, true);
    const response = await CannedResponse.create({ all_groups: 1, ...columns(input) }, { transaction });
    if (input.tag?.length) await replaceTags(response.id, input.tag, transaction);
    if (input.groups?.length) await replaceGroups(response.id, input.groups, transaction);
    return response;
  },

  async update(response, input, { transaction }) {
    await checkReferences(input, transaction);
    const values = columns(input);
    const named = values.user_id !== undefined;
    const owner = ownerOf(values.public ?? response.public, named ? values.user_id : response.user_id, named);
    if (owner !== response.user_id) values.user_id = owner;
    await response.update(values, { transaction });
    // The spec: `tag` replaces the existing tags.
    if (input.tag !== undefined) await replaceTags(response.id, input.tag ?? [], transaction);
    if (input.groups !== undefined) await replaceGroups(response.id, input.groups ?? [], transaction);
  },

  async load(responses, ctx) {
    const ids = responses.map((r) => r.id);
    const [tags, groups] = await Promise.all([
      loadLinked(CannedResponseTag, 'response_id', 'tag_id', ids, TicketTag),
      ctx.view === 'list' ? Promise.resolve(undefined) : loadLinked(CannedResponseGroup, 'response_id', 'group_id', ids, Group),
    ]);
    return { tags, groups };
  },

  serialize(r, rel, ctx) {
    const tags = rel.tags.get(r.id) ?? [];
    if (ctx.view === 'list') {
      const { created_at, updated_at, ...rest } = pick(r, CANNED_RESPONSE_LIST_FIELDS);
      return { ...rest, tags: tags.map((t) => t.name).join(','), created_at, updated_at };
    }
    return {
      ...pick(r, CANNED_RESPONSE_FIELDS),
      tags: tags.map(serializeTag),
      groups: (rel.groups?.get(r.id) ?? []).map((g) => ({ ...pick(g, OPERATOR_GROUP_FIELDS), pivot: { response_id: r.id, group_id: g.id } })),
    };
  },
};

export const cannedResponseRouter = resourceRouter(cannedResponseResource);
