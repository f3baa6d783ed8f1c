import { Router } from 'express';
import { settingsRouter } from '../http/settings';
import { operatorRouter } from './operator';
import { organisationRouter } from './organisation';
import { userRouter } from './user';

/** `/api/user/...` */
export const userAreaRouter = Router();
userAreaRouter.use(settingsRouter('/settings', 'user'));
userAreaRouter.use(userRouter, operatorRouter, organisationRouter);
