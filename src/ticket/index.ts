import { areaRouter } from '../http/dispatch';
import { settingsRouter } from '../http/settings';
import { cannedResponseRouter } from './cannedResponse';
import { channelRouter } from './channel';
import { ticketCustomFieldOptionRouter, ticketCustomFieldRouter } from './customfield';
import { departmentRouter } from './department';
import { departmentEmailRouter } from './departmentEmail';
import { feedbackRouter } from './feedback';
import { filterRouter } from './filter';
import { priorityRouter } from './priority';
import { slaPlanRouter } from './slaplan';
import { statusRouter } from './status';
import { tagRouter } from './tag';
import { ticketAttachmentDownloadRouter, ticketAttachmentRouter } from './attachment';
import { forwardRouter } from './forward';
import { incomingMailRouter } from '../mailbox/resource';
import { messageRouter } from './messages/resource';
import { ticketRouter } from './tickets/resource';
import { ticketAuditRouter } from './tickets/auditRoute';
import { ticketBulkRouter } from './bulk/resource';

const routers = [
  ticketAuditRouter, ticketBulkRouter, ticketRouter, messageRouter, forwardRouter, ticketAttachmentDownloadRouter, ticketAttachmentRouter,
  departmentRouter, departmentEmailRouter, statusRouter, priorityRouter, tagRouter, cannedResponseRouter, feedbackRouter,
  slaPlanRouter, filterRouter, ticketCustomFieldRouter, ticketCustomFieldOptionRouter, settingsRouter('/settings', 'ticket'), channelRouter,
  incomingMailRouter,
];

/** `/api/ticket/...` */
export const ticketAreaRouter = areaRouter('/api/ticket', routers);
