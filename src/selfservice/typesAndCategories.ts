import type { SelfServiceType } from '../db/models';
import { pick } from '../lib/serialize';
import type { TranslationSpec } from '../translations';
import { slugRule } from '../db/slugs';

/** What the type and category resources share: their translated fields, and the type summary categories embed. */

/** A type as categories and articles embed it. */
export const TYPE_SUMMARY_FIELDS = ['id', 'name', 'slug', 'description', 'view', 'icon', 'show_on_dashboard', 'created_at', 'updated_at'] as const;

export const serializeTypeSummary = (t: SelfServiceType) => pick(t, TYPE_SUMMARY_FIELDS);

export const TYPE_TRANSLATIONS: TranslationSpec = { type: 'selfservice_type', key: 'type_id', fields: ['name', 'slug', 'description'], rules: { slug: slugRule }, multiline: ['description'] };

export const CATEGORY_TRANSLATIONS: TranslationSpec = { type: 'selfservice_category', key: 'category_id', fields: ['name', 'slug'], rules: { slug: slugRule } };
