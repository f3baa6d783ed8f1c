import { Op, type Transaction } from 'sequelize';
import { TicketTag } from '../db/models';
import { assertNameFree } from '../db/uniqueName';
import { assertNotInFilters } from './filterUse';
import { auditLinksRemoved } from './cascadeAudit';
import { execute } from '../db/select';
import { now } from '../db/entity';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';
import type { TranslationSpec } from '../translations';
import { Joi, field } from '../lib/validation';
import { colourField } from './fields';

export const TAG_FIELDS = ['id', 'name', 'colour', 'created_at', 'updated_at'] as const;

/** A tag as its resource shows it (also what canned responses and tickets embed). */
export const serializeTag = (t: TicketTag) => pick(t, TAG_FIELDS);

export const TAG_TRANSLATIONS: TranslationSpec = { type: 'ticket_tag', key: 'tag_id', fields: ['name'] };

export const DEFAULT_TAG_COLOUR = '#dddddd';

/**
 * The tags of the given names, in the order given, those missing created (with the default
 * colour). Names are trimmed and matched the way the unique index compares them (case- and
 * accent-insensitively: `Billing`, `billing` and `bïlling` are one tag); a tag another request
 * creates at the same moment is used, not duplicated.
 */
export async function tagsByName(names: string[], transaction: Transaction): Promise<TicketTag[]> {
  const wanted: string[] = [];
  for (const raw of names) {
    const name = raw.trim();
    if (name && !wanted.some((w) => w.toLowerCase() === name.toLowerCase())) wanted.push(name);
  }
  if (!wanted.length) return [];
  const known = await TicketTag.findAll({ where: { name: { [Op.in]: wanted } }, transaction });
  const out: TicketTag[] = [];
  for (const name of wanted) {
    let tag = known.find((t) => t.name.toLowerCase() === name.toLowerCase()) ?? null;
    if (!tag) {
      // INSERT IGNORE, then a locking read: it sees the tag whether this statement or another
      // transaction created it (or the database's collation found it under another spelling).
      await TicketTag.bulkCreate([{ name, colour: DEFAULT_TAG_COLOUR }], { transaction, ignoreDuplicates: true });
      tag = await TicketTag.findOne({ where: { name }, transaction, lock: transaction.LOCK.SHARE });
      if (!tag) throw new Error(`The tag "${name}" could not be created.`);
      known.push(tag);
    }
    if (!out.some((t) => t.id === tag!.id)) out.push(tag);
  }
  return out;
}

export const tagResource: ResourceDef<TicketTag> = {
  path: '/tag',
  model: TicketTag,
  label: 'tag',
  sortable: ['name', 'created_at', 'updated_at'],
  translations: TAG_TRANSLATIONS,
  // The spec: `name` is required on update too.
  createSchema: Joi.object({ name: field.string().required(), colour: colourField().default(DEFAULT_TAG_COLOUR) }),
  updateSchema: Joi.object({ name: field.string().required(), colour: colourField() }),

  async create(input, { transaction }) {
    await assertNameFree(TicketTag, input.name, null, transaction);
    return TicketTag.create(input, { transaction });
  },

  async update(tag, input, { transaction }) {
    await assertNameFree(TicketTag, input.name, tag.id, transaction);
    await tag.update(input, { transaction });
  },

  // Tickets lose the tag (the links' foreign keys), as an update removing it would: audited, their
  // updated_at moved (the export) and a ticket.updated [tag] each (auditLinksRemoved). A tag a
  // saved filter's condition uses is not deleted.
  async destroy(tag, { transaction }) {
    await assertNotInFilters('tag', tag.id, 'tag', transaction);
    await auditLinksRemoved('tag', tag.id, transaction);
    // A join from the tag's links (an `id IN (SELECT ...)` UPDATE scans, and locks, every ticket in MariaDB 10.11).
    await execute('UPDATE ticket_tag_links l STRAIGHT_JOIN tickets k ON k.id = l.ticket_id SET k.updated_at = :now WHERE l.tag_id = :id', { now: now(), id: tag.id }, transaction);
    await tag.destroy({ transaction });
  },

  serialize: serializeTag,
};

export const tagRouter = resourceRouter(tagResource);
