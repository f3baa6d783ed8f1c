import request from 'supertest';
import { useApi } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';

const api = useApi();

/** The spec's core settings object. */
const CORE_SETTINGS = [
  'active_plugins', 'admin_folder', 'date_format', 'default_country', 'default_frontend_language', 'default_operator_language',
  'default_email', 'default_timezone', 'enable_ssl', 'force_operator_ssl', 'frontend_language', 'frontend_template',
  'is_installed', 'language_frontend_toggle', 'language_operator_toggle', 'maintenance_mode', 'operator_language',
  'operator_template', 'simpleauth_key', 'time_format',
];

describe('GET /api/core/settings', () => {
  it('returns the core settings object: every key of the spec, every value a string', async () => {
    const data = expectSuccess(await api.get('/api/core/settings'));
    expect(Array.isArray(data)).toBe(false);
    expect(Object.keys(data).sort()).toEqual([...CORE_SETTINGS].sort());
    for (const key of CORE_SETTINGS) expect(typeof data[key]).toBe('string');
  });

  it('returns the install defaults and the secret simpleauth_key', async () => {
    const data = expectSuccess(await api.get('/api/core/settings'));
    expect(data).toMatchObject({ is_installed: '1', maintenance_mode: '0', enable_ssl: '0' });
    expect(data.simpleauth_key.length).toBeGreaterThanOrEqual(16);
    expect(expectSuccess(await api.get('/api/core/settings')).simpleauth_key).toBe(data.simpleauth_key);
  });

  it('is not readable without a token', async () => {
    const res = await request(api.app).get('/api/core/settings');
    expect(res.status).toBe(401);
    expect(res.body.data).toBeNull();
    expect(JSON.stringify(res.body)).not.toContain('simpleauth');
  });
});
