import { settingsRouter } from '../http/settings';
import { areaRouter } from '../http/dispatch';
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

/** `/api/core/...` */
export const coreRouter = areaRouter('/api/core', routers);
