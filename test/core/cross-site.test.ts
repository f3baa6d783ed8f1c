/**
 * Cross-site writes: a state-changing request a browser marks as coming from another site
 * (Sec-Fetch-Site: cross-site, or a foreign Origin) is refused with 403 and changes nothing; reads,
 * same-origin requests and clients without those headers are unaffected.
 */
import request from 'supertest';
import { Organisation } from '../../src/db/models';
import { unique, useApi } from '../helpers/app';
import { encodeForm } from '../helpers/form';
import { expectError, expectList, expectSuccess } from '../helpers/envelope';

const api = useApi();
const MESSAGE = /^Cross-site requests may not change data/;

const post = (name: string, headers: Record<string, string>) =>
  request(api.app).post('/api/user/organisation').auth(api.token, 'x').type('form').set(headers).send(encodeForm({ name }));

describe('cross-site writes', () => {
  it.each([
    ['a foreign Origin', { Origin: 'https://evil.example' }],
    ['Origin null', { Origin: 'null' }],
    ['Sec-Fetch-Site: cross-site', { 'Sec-Fetch-Site': 'cross-site' }],
    ['a foreign Origin to a server named by Host', { Origin: 'https://evil.example', Host: 'helpdesk.example' }],
  ])('refuses a POST with %s and creates nothing', async (_what, headers) => {
    const name = unique('Cross ');
    expectError(await post(name, headers), 403, MESSAGE);
    expect(await Organisation.count({ where: { name } })).toBe(0);
  });

  it('refuses PUT and DELETE too, and a method override riding on a cross-site POST', async () => {
    const org = expectSuccess(await api.post('/api/user/organisation', { name: unique('Org ') }), 'Successfully created new organisation!');
    const evil = { Origin: 'https://evil.example' };
    expectError(await request(api.app).put(`/api/user/organisation/${org.id}`).auth(api.token, 'x').set(evil).type('form').send('name=x'), 403, MESSAGE);
    expectError(await request(api.app).delete(`/api/user/organisation/${org.id}`).auth(api.token, 'x').set(evil), 403, MESSAGE);
    expectError(await request(api.app).post(`/api/user/organisation/${org.id}`).auth(api.token, 'x').set({ ...evil, 'X-HTTP-Method-Override': 'DELETE' }), 403, MESSAGE);
    expect(await Organisation.findByPk(org.id)).not.toBeNull();
  });

  it('lets same-origin browsers, non-browser clients and cross-site reads through', async () => {
    expectSuccess(await post(unique('Same '), { Host: 'helpdesk.example', Origin: 'https://helpdesk.example', 'Sec-Fetch-Site': 'same-origin' }), 'Successfully created new organisation!');
    expectSuccess(await post(unique('Plain '), {}), 'Successfully created new organisation!');
    expectSuccess(await post(unique('User '), { 'Sec-Fetch-Site': 'none' }), 'Successfully created new organisation!');
    expectList(await request(api.app).get('/api/user/organisation').auth(api.token, 'x').set({ Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' }));
  });
});
