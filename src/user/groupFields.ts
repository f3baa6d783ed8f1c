/** What a group shows (user groups; operator groups add `administrator`). */
export const GROUP_FIELDS = ['id', 'name', 'description', 'colour', 'created_at', 'updated_at'] as const;
export const OPERATOR_GROUP_FIELDS = ['id', 'name', 'description', 'colour', 'administrator', 'created_at', 'updated_at'] as const;
