import { Router } from 'express';
import { settingsRouter } from '../http/settings';

/** `/api/user/...` */
export const userAreaRouter = Router();
userAreaRouter.use(settingsRouter('/settings', 'user'));
