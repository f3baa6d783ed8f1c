import { useApi } from '../helpers/app';

const api = useApi();

describe('the web app', () => {
  it('lists the seeded brand in the envelope', async () => {
    const res = await api.get('/api/core/brand');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'success', message: null, count: 1 });
    expect(res.body.data[0]).toMatchObject({ id: 1, name: 'Default Brand', enabled: 1 });
  });
});
