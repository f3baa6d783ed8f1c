import './noRedisEnv';
import request from 'supertest';
import { useApi } from '../helpers/app';
import { expectError } from '../helpers/envelope';

const api = useApi();

describe('/readyz while Redis is unreachable', () => {
  it('explains it in one sentence, ending with one full stop', async () => {
    expectError(await request(api.app).get('/readyz'), 503,
      /^Not ready: redis: Redis at redis:\/\/127\.0\.0\.1:1 \(REDIS_URL\) is unreachable \([^)]+\): check that Redis is running and listening there, or set REDIS_URL\.$/);
  });
});
