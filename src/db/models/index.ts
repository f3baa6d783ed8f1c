import { ApiToken } from './ApiToken';
import { Brand } from './Brand';
import { IpBan } from './IpBan';
import { IpWhitelist } from './IpWhitelist';
import { Language } from './Language';
import { Setting } from './Setting';
import { SpamRule } from './SpamRule';
import { Translation } from './Translation';

export { ApiToken, Brand, IpBan, IpWhitelist, Language, Setting, SpamRule, Translation };

/** Every model, registered on the Sequelize instance. */
export const models = [ApiToken, Brand, IpBan, IpWhitelist, Language, Setting, SpamRule, Translation];
