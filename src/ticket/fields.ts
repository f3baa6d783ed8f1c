import { Joi } from '../lib/validation';

/** Field shapes shared by the ticket configuration resources. */

/** `#rrggbb` (or `#rgb`), kept as sent; empty is not given (the default on create, unchanged on update). */
export const colourField = () => Joi.string().trim().empty('').pattern(/^#(?:[0-9a-fA-F]{3}){1,2}$/);
