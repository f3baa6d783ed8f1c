import request from 'supertest';
import { useApi } from '../helpers/app';

const api = useApi();

describe('GET /api/selfservice/settings', () => {
  it('returns the self-service settings object with the keys SupportPal\'s client reads, string values', async () => {
    const res = await api.get('/api/selfservice/settings');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'success', message: null,
      data: {
        comment_captcha: '1', comment_moderation: '1', comment_ordering: '0', comment_ratings: '1', comment_threshold: '0',
        comment_write: '0', comments_enabled: '1', rating_post: '0', ratings_enabled: '1',
      },
    });
  });

  it('is read-only: 405 with the envelope', async () => {
    const res = await api.put('/api/selfservice/settings', { comments_enabled: 0 });
    expect(res.status).toBe(405);
    expect(res.body).toMatchObject({ status: 'error', data: null });
    expect((await api.get('/api/selfservice/settings')).body.data.comments_enabled).toBe('1');
  });

  it('needs authentication', async () => {
    const res = await request(api.app).get('/api/selfservice/settings');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ status: 'error', data: null });
  });
});
