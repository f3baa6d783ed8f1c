import type { QueryInterface } from 'sequelize';
import { dropGrams, indexGrams, type GramSource } from './068_user_search_grams';

export const name = '069_organisation_search_grams';

/**
 * The organisation list's `search` and the user list's `organisation_name` match a part of an
 * organisation's name (`LIKE '%term%'`): each read every organisation. As migration 068 does for
 * people, `organisation_search_grams` holds every three-character part of each organisation's
 * name, kept by triggers on `organisations`, and the filters narrow the organisations to those
 * holding the term's rarest gram before the LIKE decides (src/db/searchGrams.ts).
 */
export const ORGANISATIONS: GramSource = {
  table: 'organisations', grams: 'organisation_search_grams', owner: 'organisation_id',
  texts: (r) => [`${r}.name`],
  columns: ['name'],
};

export const up = (q: QueryInterface): Promise<void> => indexGrams(q, ORGANISATIONS);
export const down = (q: QueryInterface): Promise<void> => dropGrams(q, ORGANISATIONS);
