import { areaRouter } from '../http/dispatch';
import { settingsRouter } from '../http/settings';
import { articleRouter } from './article/resource';
import { attachmentDownloadRouter, attachmentRouter } from './attachment';
import { categoryRouter } from './category';
import { commentRouter } from './comment';
import { tagRouter } from './tag';
import { typeRouter } from './type';

const routers = [settingsRouter('/settings', 'selfservice'), typeRouter, tagRouter, categoryRouter, articleRouter, attachmentRouter, attachmentDownloadRouter, commentRouter];

/** `/api/selfservice/...` */
export const selfServiceRouter = areaRouter('/api/selfservice', routers);
