import { IpWhitelist } from '../db/models';
import { ipAddress } from '../lib/ip';
import { ipFilter } from './ipFilter';
import { resourceRouter, type ResourceDef } from '../http/resource';
import { pick } from '../lib/serialize';
import { Joi, field } from '../lib/validation';

/** The fields of every response (the OpenAPI document describes the same list). */
export const IPWHITELIST_FIELDS = ['id', 'ip', 'description', 'event_user', 'event_operator', 'event_api', 'created_at', 'updated_at'] as const;

export const ipWhitelistResource: ResourceDef<IpWhitelist> = {
  path: '/ipwhitelist',
  model: IpWhitelist,
  label: 'whitelisted ip',
  sortable: ['ip', 'created_at', 'updated_at'],
  filters: { ip: ipFilter() },
  createSchema: Joi.object({
    ip: ipAddress().required(),
    description: field.multiline(65535),
    event_user: field.flag().default(1),
    event_operator: field.flag().default(1),
    event_api: field.flag().default(1),
  }),
  updateSchema: Joi.object({ ip: ipAddress(), description: field.multiline(65535), event_user: field.flag(), event_operator: field.flag(), event_api: field.flag() }),
  serialize: (w) => pick(w, IPWHITELIST_FIELDS),
};

export const ipWhitelistRouter = resourceRouter(ipWhitelistResource);
