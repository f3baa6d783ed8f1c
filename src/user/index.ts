import { Router } from 'express';
import { settingsRouter } from '../http/settings';
import { organisationCustomFieldRouter, userCustomFieldRouter } from './customFields';
import { operatorRouter } from './operator';
import { organisationRouter } from './organisation';
import { permissionRouter } from './permission';
import { roleRouter } from './role';
import { userRouter } from './user';

/** `/api/user/...` */
export const userAreaRouter = Router();
userAreaRouter.use(settingsRouter('/settings', 'user'));
userAreaRouter.use(userRouter, operatorRouter, organisationRouter);
userAreaRouter.use(organisationCustomFieldRouter, userCustomFieldRouter, roleRouter, permissionRouter);
