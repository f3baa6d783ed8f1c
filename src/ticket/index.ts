import { Router } from 'express';

/** `/api/ticket/...` */
export const ticketAreaRouter = Router();
