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
