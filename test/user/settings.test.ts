import { useApi } from '../helpers/app';

const api = useApi();

describe('GET /api/user/settings', () => {
  it('returns the user settings object: the four keys, string values', async () => {
    const res = await api.get('/api/user/settings');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'success', message: null,
      data: { ldap_enabled: '0', registration_captcha: '1', registration_enabled: '1', user_name_format: '1' },
    });
    for (const v of Object.values(res.body.data)) expect(typeof v).toBe('string');
  });

  it('is read-only', async () => {
    const res = await api.put('/api/user/settings', { ldap_enabled: 1 });
    expect([404, 405]).toContain(res.status);
    expect(res.body).toMatchObject({ status: 'error', data: null });
  });

  it('needs authentication', async () => {
    const request = (await import('supertest')).default;
    const res = await request(api.app).get('/api/user/settings');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ status: 'error', data: null });
  });
});
