// Imported first by spamruleCap.test.ts, before any module reads the configuration: a cap the
// shared test database always reaches once the test has stored one rule itself.
process.env.SPAM_RULES_MAX = '1';
