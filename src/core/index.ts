import { Router } from 'express';
import { settingsRouter } from '../http/settings';
import { mountRoutes } from '../http/routes';
import { brandRouter } from './brand';
import { emailTemplateRouter } from './emailTemplate';
import { ipBanRouter } from './ipban';
import { ipWhitelistRouter } from './ipwhitelist';
import { languageRouter } from './language';
import { spamRuleRouter } from './spamrule';
import { eventFeedRouter } from './event';
import { jobStatusRouter } from './job';
import { mailRouter } from './mail';
import { caughtMailRouter } from '../mailcatcher/resource';
import { webhookDeliveryRouter, webhookRouter } from './webhook';

const routers = [brandRouter, ipBanRouter, ipWhitelistRouter, languageRouter, spamRuleRouter, settingsRouter('/settings', 'core'), emailTemplateRouter,
  eventFeedRouter, jobStatusRouter, webhookRouter, webhookDeliveryRouter, mailRouter, caughtMailRouter];
mountRoutes('/api/core', routers);

/** `/api/core/...` */
export const coreRouter = Router().use(...routers);
