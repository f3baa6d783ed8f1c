/**
 * The number of spam rules is capped (SPAM_RULES_MAX, 1 in this file): every incoming mail and
 * comment runs each rule, so past the cap a create is refused and stores nothing; the rules there
 * are can still be edited.
 */
import './spamruleCapEnv';
import { SpamRule } from '../../src/db/models';
import { unique, useApi } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';

const api = useApi();

it('refuses a rule past SPAM_RULES_MAX and stores nothing; an existing rule can still be edited', async () => {
  // At least one rule, whatever the shared database holds: the cap (1) is reached.
  const existing = await SpamRule.create({ text: unique('cap-existing'), type: 0, event_message: 1, event_comment: 1 });
  const text = unique('cap-refused');
  expectError(await api.post('/api/core/spamrule', { text, type: 0 }), 422, 'There may be at most 1 spam rules (SPAM_RULES_MAX): delete or edit one instead.');
  expect(await SpamRule.count({ where: { text } })).toBe(0);
  const edited = unique('cap-edited');
  expect(expectSuccess(await api.put(`/api/core/spamrule/${existing.id}`, { text: edited }), 'Successfully updated the spam rule!')).toMatchObject({ text: edited });
  await existing.destroy();
});
