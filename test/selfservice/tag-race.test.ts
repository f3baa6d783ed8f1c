/**
 * Parallel creates of one self-service tag: one row, every other request 422 with the name's
 * message (never a deadlock's 500).
 */
import { SelfServiceTag } from '../../src/db/models';
import { unique, useApi } from '../helpers/app';
import { expectError } from '../helpers/envelope';

const api = useApi();

it('20 parallel creates of one tag name make one tag; the others are 422', async () => {
  for (let round = 0; round < 3; round++) {
    const name = unique('Race ');
    const results = await Promise.all(Array.from({ length: 20 }, () => api.post('/api/selfservice/tag', { name })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) expectError(r, 422, 'The name has already been taken.');
    expect(await SelfServiceTag.count({ where: { name } })).toBe(1);
  }
});
