import { ApiToken } from './ApiToken';
import { Article } from './Article';
import { ArticleAttachment } from './ArticleAttachment';
import { ArticleComment } from './ArticleComment';
import { ArticleSearch } from './ArticleSearch';
import { ArticleType } from './ArticleType';
import { Brand } from './Brand';
import { CannedResponse } from './CannedResponse';
import { Channel } from './Channel';
import { CustomField } from './CustomField';
import { CustomFieldOption } from './CustomFieldOption';
import { CustomFieldValue } from './CustomFieldValue';
import { Department } from './Department';
import { DomainEvent } from './DomainEvent';
import { DepartmentEmail } from './DepartmentEmail';
import { EmailTemplate } from './EmailTemplate';
import { FeedbackField } from './FeedbackField';
import { FeedbackForm } from './FeedbackForm';
import { Group } from './Group';
import { IdempotencyKey } from './IdempotencyKey';
import { IncomingMail } from './IncomingMail';
import { CaughtMail } from './CaughtMail';
import { IpBan } from './IpBan';
import { IpWhitelist } from './IpWhitelist';
import { Language } from './Language';
import { MailMessageId } from './MailMessageId';
import { MailDelivery } from './MailDelivery';
import { Organisation } from './Organisation';
import { OrganisationDomain } from './OrganisationDomain';
import { OutboxEntry } from './OutboxEntry';
import { Permission } from './Permission';
import { PersonEmail } from './PersonEmail';
import {
  ArticleCategory, ArticleTag, CannedResponseGroup, CannedResponseTag, CustomFieldBrand, CustomFieldDepartment,
  DepartmentBrand, DepartmentGroup, OperatorDepartment, PriorityDepartment, RoleGroup, RolePermission, TicketAssignee,
  TicketFilterGroup, TicketLink, TicketTagLink, TicketWatcher, UserGroup,
} from './pivots';
import { Role } from './Role';
import { SelfServiceCategory } from './SelfServiceCategory';
import { SelfServiceTag } from './SelfServiceTag';
import { SelfServiceType } from './SelfServiceType';
import { Setting } from './Setting';
import { SlaPlan, SlaPlanSchedule, SlaPlanTarget } from './SlaPlan';
import { SpamRule } from './SpamRule';
import { Ticket } from './Ticket';
import { TicketAttachment } from './TicketAttachment';
import { TicketFeedback } from './TicketFeedback';
import { TicketFeedbackValue } from './TicketFeedbackValue';
import { TicketPriority } from './TicketPriority';
import { TicketStatus } from './TicketStatus';
import { TicketTag } from './TicketTag';
import { TicketFilter, TicketFilterCondition } from './TicketFilter';
import { TicketMessage } from './TicketMessage';
import { Translation } from './Translation';
import { Upload } from './Upload';
import { User } from './User';
import { UserEmail } from './UserEmail';
import { UserPhone } from './UserPhone';
import { UserToken } from './UserToken';
import { Webhook } from './Webhook';
import { WebhookDelivery } from './WebhookDelivery';

export {
  ApiToken, Article, ArticleAttachment, ArticleCategory, ArticleComment, ArticleSearch, ArticleTag, ArticleType, Brand,
  CannedResponse, CannedResponseGroup, CannedResponseTag, Channel, CustomField, CustomFieldBrand, CustomFieldDepartment,
  CustomFieldOption, CustomFieldValue, Department, DepartmentBrand, DepartmentEmail, DepartmentGroup, EmailTemplate,
  FeedbackField, FeedbackForm, Group, IpBan, IpWhitelist, Language, MailMessageId, OperatorDepartment, Organisation, OrganisationDomain,
  OutboxEntry, Permission, PersonEmail, PriorityDepartment, Role, RoleGroup, RolePermission, SelfServiceCategory,
  SelfServiceTag, SelfServiceType, Setting, SlaPlan, SlaPlanSchedule, SlaPlanTarget, SpamRule, Ticket, TicketAssignee,
  TicketAttachment, TicketFeedback, TicketFeedbackValue, TicketFilter, TicketFilterCondition, TicketFilterGroup,
  TicketLink, TicketMessage, TicketPriority, TicketStatus, TicketTag, TicketTagLink, TicketWatcher, Translation, Upload,
  User, UserEmail, UserGroup, UserPhone, UserToken,
  DomainEvent, IdempotencyKey, IncomingMail, MailDelivery, Webhook, WebhookDelivery, CaughtMail,
};

/** Every model, registered on the Sequelize instance. */
export const models = [
  ApiToken, Article, ArticleAttachment, ArticleCategory, ArticleComment, ArticleSearch, ArticleTag, ArticleType, Brand,
  CannedResponse, CannedResponseGroup, CannedResponseTag, Channel, CustomField, CustomFieldBrand, CustomFieldDepartment,
  CustomFieldOption, CustomFieldValue, Department, DepartmentBrand, DepartmentEmail, DepartmentGroup, EmailTemplate,
  FeedbackField, FeedbackForm, Group, IpBan, IpWhitelist, Language, MailMessageId, OperatorDepartment, Organisation, OrganisationDomain,
  OutboxEntry, Permission, PersonEmail, PriorityDepartment, Role, RoleGroup, RolePermission, SelfServiceCategory,
  SelfServiceTag, SelfServiceType, Setting, SlaPlan, SlaPlanSchedule, SlaPlanTarget, SpamRule, Ticket, TicketAssignee,
  TicketAttachment, TicketFeedback, TicketFeedbackValue, TicketFilter, TicketFilterCondition, TicketFilterGroup,
  TicketLink, TicketMessage, TicketPriority, TicketStatus, TicketTag, TicketTagLink, TicketWatcher, Translation, Upload,
  User, UserEmail, UserGroup, UserPhone, UserToken,
  DomainEvent, IdempotencyKey, IncomingMail, MailDelivery, Webhook, WebhookDelivery, CaughtMail,
];
