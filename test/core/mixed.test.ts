import { Op } from 'sequelize';
import { ValidationError } from '../../src/errors';
import { idsFilter, parseListQuery, type ListSpec } from '../../src/http/listQuery';

// The spec's `mixed` filter type (one id or a comma-delimited string of ids), written once for
// the list endpoints that take it.
const spec: ListSpec = { sortable: [], filters: { status: idsFilter('status_id') }, dates: false };
const whereOf = async (query: Record<string, unknown>) => (await parseListQuery(spec, query)).where as any;

describe('mixed id filters', () => {
  it('take one id, a comma list (spaces and repeats allowed) or a bracket list', async () => {
    expect((await whereOf({ status: '3' }))[Op.and]).toEqual([{ status_id: { [Op.in]: [3] } }]);
    expect((await whereOf({ status: '1, 2,2,3' }))[Op.and]).toEqual([{ status_id: { [Op.in]: [1, 2, 3] } }]);
    expect((await whereOf({ status: { 0: '4', 1: '5' } }))[Op.and]).toEqual([{ status_id: { [Op.in]: [4, 5] } }]);
    expect((await whereOf({ status: '-1' }))[Op.and]).toEqual([{ status_id: { [Op.in]: [-1] } }]); // `assigned=-1`: unassigned
  });

  it('take an empty value as no filter', async () => {
    expect(await whereOf({ status: '' })).toEqual({});
  });

  it('refuse anything else with a 422 naming the parameter', async () => {
    for (const bad of ['a', '1,x', '1.5', '-2', ',']) {
      const err = await parseListQuery(spec, { status: bad }).then(() => null, (e) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect(err.message).toBe('The selected status is invalid.');
    }
  });
});
