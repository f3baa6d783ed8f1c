/**
 * The ticket's own columns that an engine may keep beside its text, so that a search narrowed by
 * them (the list's filters, `status:` and the like) is answered by the engine alone.
 */
export const FILTER_COLUMNS = ['status_id', 'priority_id', 'department_id', 'brand_id', 'channel_id', 'user_id', 'internal', 'locked', 'created_at'] as const;
export type FilterColumn = (typeof FILTER_COLUMNS)[number];
