import { Column, DataType, Model, PrimaryKey, Table } from 'sequelize-typescript';

const key = () => ({ type: DataType.INTEGER.UNSIGNED, allowNull: false });

/** Link tables: two ids, no other columns. */
@Table({ tableName: 'user_groups' })
export class UserGroup extends Model {
  @PrimaryKey @Column(key()) declare user_id: number;
  @PrimaryKey @Column(key()) declare group_id: number;
}

@Table({ tableName: 'role_permissions' })
export class RolePermission extends Model {
  @PrimaryKey @Column(key()) declare role_id: number;
  @PrimaryKey @Column(key()) declare permission_id: number;
}

@Table({ tableName: 'role_groups' })
export class RoleGroup extends Model {
  @PrimaryKey @Column(key()) declare role_id: number;
  @PrimaryKey @Column(key()) declare group_id: number;
}

@Table({ tableName: 'custom_field_brands' })
export class CustomFieldBrand extends Model {
  @PrimaryKey @Column(key()) declare field_id: number;
  @PrimaryKey @Column(key()) declare brand_id: number;
}

@Table({ tableName: 'department_brands' })
export class DepartmentBrand extends Model {
  @PrimaryKey @Column(key()) declare department_id: number;
  @PrimaryKey @Column(key()) declare brand_id: number;
}

@Table({ tableName: 'department_groups' })
export class DepartmentGroup extends Model {
  @PrimaryKey @Column(key()) declare department_id: number;
  @PrimaryKey @Column(key()) declare group_id: number;
}

@Table({ tableName: 'operator_departments' })
export class OperatorDepartment extends Model {
  @PrimaryKey @Column(key()) declare user_id: number;
  @PrimaryKey @Column(key()) declare department_id: number;
}

@Table({ tableName: 'priority_departments' })
export class PriorityDepartment extends Model {
  @PrimaryKey @Column(key()) declare priority_id: number;
  @PrimaryKey @Column(key()) declare department_id: number;
}

@Table({ tableName: 'canned_response_tags' })
export class CannedResponseTag extends Model {
  @PrimaryKey @Column(key()) declare response_id: number;
  @PrimaryKey @Column(key()) declare tag_id: number;
}

@Table({ tableName: 'canned_response_groups' })
export class CannedResponseGroup extends Model {
  @PrimaryKey @Column(key()) declare response_id: number;
  @PrimaryKey @Column(key()) declare group_id: number;
}

@Table({ tableName: 'custom_field_departments' })
export class CustomFieldDepartment extends Model {
  @PrimaryKey @Column(key()) declare field_id: number;
  @PrimaryKey @Column(key()) declare department_id: number;
}

/** Operator groups that see a shared ticket filter (when it is not shared with all groups). */
@Table({ tableName: 'ticket_filter_groups' })
export class TicketFilterGroup extends Model {
  @PrimaryKey @Column(key()) declare filter_id: number;
  @PrimaryKey @Column(key()) declare group_id: number;
}

@Table({ tableName: 'article_categories' })
export class ArticleCategory extends Model {
  @PrimaryKey @Column(key()) declare article_id: number;
  @PrimaryKey @Column(key()) declare category_id: number;
}

@Table({ tableName: 'article_tags' })
export class ArticleTag extends Model {
  @PrimaryKey @Column(key()) declare article_id: number;
  @PrimaryKey @Column(key()) declare tag_id: number;
}

/** Tags of a ticket (`ticket_tags` is the tag table). */
@Table({ tableName: 'ticket_tag_links' })
export class TicketTagLink extends Model {
  @PrimaryKey @Column(key()) declare ticket_id: number;
  @PrimaryKey @Column(key()) declare tag_id: number;
}

/** Operators assigned to a ticket. */
@Table({ tableName: 'ticket_assignees' })
export class TicketAssignee extends Model {
  @PrimaryKey @Column(key()) declare ticket_id: number;
  @PrimaryKey @Column(key()) declare user_id: number;
}

/** Operators watching a ticket. */
@Table({ tableName: 'ticket_watchers' })
export class TicketWatcher extends Model {
  @PrimaryKey @Column(key()) declare ticket_id: number;
  @PrimaryKey @Column(key()) declare user_id: number;
}

/** Linked tickets: one row per direction. */
@Table({ tableName: 'ticket_links' })
export class TicketLink extends Model {
  @PrimaryKey @Column(key()) declare ticket_id: number;
  @PrimaryKey @Column(key()) declare linked_ticket_id: number;
}
