/** TEST_PREFIX: this run's databases and Redis prefixes carry it (default helpdesk_t). */
import { config } from '../../src/config';
import { likePrefix, testPrefix } from '../helpers/testPrefix';

describe('the test prefix', () => {
  const before = process.env.TEST_PREFIX;
  afterEach(() => {
    if (before === undefined) delete process.env.TEST_PREFIX;
    else process.env.TEST_PREFIX = before;
  });

  it('names this run\'s database and Redis prefix', () => {
    const prefix = testPrefix();
    expect(config().database.name).toMatch(new RegExp(`^${prefix}\\d+_\\d+$`));
    expect(config().queuePrefix).toBe(config().database.name);
  });

  it('defaults to helpdesk_t, takes TEST_PREFIX, and refuses what is not a plain name', () => {
    delete process.env.TEST_PREFIX;
    expect(testPrefix()).toBe('helpdesk_t');
    process.env.TEST_PREFIX = 'ci_run_b';
    expect(testPrefix()).toBe('ci_run_b');
    for (const bad of ['x', 'a%b', 'a_b_1', "a'b", '1abc']) {
      process.env.TEST_PREFIX = bad;
      expect(() => testPrefix()).toThrow(/^TEST_PREFIX must be/);
    }
  });

  it('is matched literally in LIKE', () => {
    expect(likePrefix('helpdesk_t')).toBe('helpdesk\\_t%');
  });
});
