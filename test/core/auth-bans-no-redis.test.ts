import './noRedisEnv';
import request from 'supertest';
import { IpBan } from '../../src/db/models';
import { logger } from '../../src/logger';
import { useApi } from '../helpers/app';
import { uniqueIpv4 } from './support';

const api = useApi();
const from = (ip: string) => request(api.app).get('/api/core/brand/1').set('X-Forwarded-For', ip);

describe('failed authentications while Redis is unreachable', () => {
  it('still authenticates (failures go uncounted, no ban) and logs the outage once', async () => {
    const warn = jest.spyOn(logger, 'warn');
    try {
      const ip = uniqueIpv4();
      const started = Date.now();
      for (let i = 0; i < 15; i++) expect((await from(ip).auth(`hd_wrong_${i}_xxxxxxxxxxxxxxxxxxxx`, 'x')).status).toBe(401);
      expect(Date.now() - started).toBeLessThan(5000); // nobody waits on the missing Redis
      expect((await from(ip).auth(api.token, 'x')).status).toBe(200);
      expect(await IpBan.count({ where: { ip } })).toBe(0);
      const outage = warn.mock.calls.filter((c) => String(c[1]).startsWith('Redis unavailable'));
      expect(outage).toHaveLength(1);
    } finally {
      warn.mockRestore();
    }
  });
});
