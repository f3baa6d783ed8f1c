import { ApiToken } from './ApiToken';
import { Brand } from './Brand';
import { CustomField } from './CustomField';
import { CustomFieldOption } from './CustomFieldOption';
import { CustomFieldValue } from './CustomFieldValue';
import { Department } from './Department';
import { DepartmentEmail } from './DepartmentEmail';
import { Group } from './Group';
import { IpBan } from './IpBan';
import { IpWhitelist } from './IpWhitelist';
import { Language } from './Language';
import { Organisation } from './Organisation';
import { OrganisationDomain } from './OrganisationDomain';
import { OutboxEntry } from './OutboxEntry';
import { Permission } from './Permission';
import {
  CustomFieldBrand, DepartmentBrand, DepartmentGroup, OperatorDepartment, RoleGroup, RolePermission, UserGroup,
} from './pivots';
import { Role } from './Role';
import { Setting } from './Setting';
import { SpamRule } from './SpamRule';
import { Translation } from './Translation';
import { User } from './User';
import { UserEmail } from './UserEmail';
import { UserPhone } from './UserPhone';
import { UserToken } from './UserToken';

export {
  ApiToken, Brand, CustomField, CustomFieldBrand, CustomFieldOption, CustomFieldValue, Department, DepartmentBrand,
  DepartmentEmail, DepartmentGroup, Group, IpBan, IpWhitelist, Language, OperatorDepartment, Organisation,
  OrganisationDomain, OutboxEntry, Permission, Role, RoleGroup, RolePermission, Setting, SpamRule, Translation, User,
  UserEmail, UserGroup, UserPhone, UserToken,
};

/** Every model, registered on the Sequelize instance. */
export const models = [
  ApiToken, Brand, CustomField, CustomFieldBrand, CustomFieldOption, CustomFieldValue, Department, DepartmentBrand,
  DepartmentEmail, DepartmentGroup, Group, IpBan, IpWhitelist, Language, OperatorDepartment, Organisation,
  OrganisationDomain, OutboxEntry, Permission, Role, RoleGroup, RolePermission, Setting, SpamRule, Translation, User,
  UserEmail, UserGroup, UserPhone, UserToken,
];
