import { Router } from 'express';
import { departmentRouter } from './department';

/** `/api/ticket/...` */
export const ticketAreaRouter = Router();
ticketAreaRouter.use(departmentRouter);
