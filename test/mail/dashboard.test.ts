import request from 'supertest';
import { useApi } from '../helpers/app';

const api = useApi();

describe('the queue dashboard', () => {
  it('asks for the API token', async () => {
    const res = await request(api.app).get('/admin/queues');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Basic/);
    expect(res.body).toMatchObject({ status: 'error', data: null });
    expect((await request(api.app).get('/admin/queues/api/queues').auth('wrong-token', 'x')).status).toBe(401);
  });

  it('shows every queue of the project to a token holder', async () => {
    const page = await request(api.app).get('/admin/queues').auth(api.token, 'x');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/html/);
    const res = await request(api.app).get('/admin/queues/api/queues').auth(api.token, 'x');
    expect(res.status).toBe(200);
    expect(res.body.queues.map((q: { name: string }) => q.name).sort()).toEqual(['mail', 'mailbox', 'scheduler']);
  });
});
