import { Router } from 'express';
import { Channel } from '../db/models';
import { channelScope } from '../seed/ticketConfig';
import { sendSuccess } from '../http/envelope';
import { HttpError, MethodNotAllowedError } from '../http/errors';
import { recorded, type RecordedRouter } from '../http/routes';
import { pick } from '../lib/serialize';
import { readSettings } from '../db/settings';
import { channelByName } from './channelByName';

export const CHANNEL_FIELDS = ['id', 'name', 'enabled', 'class', 'created_at', 'updated_at'] as const;

/** A channel as tickets embed it. */
export const serializeChannel = (c: Channel) => pick(c, CHANNEL_FIELDS);

/** The settings object of a channel: every value a string. */
export const channelSettings = (channel: Channel) => readSettings(channelScope(channel.id));

const PATH = '/channel/:channel/settings';

/** `GET /channel/{channel}/settings`: the channel settings of the channel of that name; 404 for an unknown one. */
function channelSettingsRouter(): RecordedRouter {
  const router = Router();
  router.get(PATH, async (req, res) => {
    const channel = await channelByName(String(req.params.channel));
    if (!channel) throw new HttpError(404, 'The channel with given name was not found.');
    sendSuccess(res, await channelSettings(channel));
  });
  router.all(PATH, (req) => {
    throw new MethodNotAllowedError(req.method, 'GET');
  });
  return recorded(router, [{ method: 'GET', path: PATH, action: 'settings', label: 'channel settings' }]);
}

export const channelRouter = channelSettingsRouter();
