import { areaRouter } from '../http/dispatch';
import { settingsRouter } from '../http/settings';
import { organisationCustomFieldRouter, userCustomFieldRouter } from '../customfields/fields';
import { operatorGroupRouter, userGroupRouter } from './group';
import { operatorRouter } from './operators/resource';
import { organisationRouter } from './organisation';
import { permissionRouter } from './permission';
import { roleRouter } from './role';
import { userRouter } from './users/resource';

const routers = [
  settingsRouter('/settings', 'user'), userRouter, operatorRouter, organisationRouter, organisationCustomFieldRouter,
  userCustomFieldRouter, roleRouter, permissionRouter, userGroupRouter, operatorGroupRouter,
];

/** `/api/user/...` */
export const userAreaRouter = areaRouter('/api/user', routers);
