import { Router } from 'express';
import { settingsRouter } from '../http/settings';
import { brandRouter } from './brand';
import { ipBanRouter } from './ipban';
import { ipWhitelistRouter } from './ipwhitelist';
import { languageRouter } from './language';
import { spamRuleRouter } from './spamrule';

/** `/api/core/...` */
export const coreRouter = Router();
coreRouter.use(brandRouter, ipBanRouter, ipWhitelistRouter, languageRouter, spamRuleRouter, settingsRouter('/settings', 'core'));
