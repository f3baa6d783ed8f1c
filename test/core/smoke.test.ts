import { useApi } from '../helpers/app';

const api = useApi();

describe('the web app', () => {
  // The files run by one jest worker share a database, so other files may have added brands:
  // look for the seeded one rather than counting the table.
  it('lists the seeded brand in the envelope', async () => {
    const res = await api.get('/api/core/brand', { order_column: 'id', order_direction: 'asc', limit: 1 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'success', message: null });
    expect(res.body.count).toBeGreaterThanOrEqual(1);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0]).toMatchObject({ id: 1, name: 'Default Brand', enabled: 1 });
  });
});
