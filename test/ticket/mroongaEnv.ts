// Imported first by ticket-search-mroonga.test.ts, before any module reads the configuration: the
// ticket search on Mroonga (the plugin is installed by .ci/run).
process.env.SEARCH_ENGINE = 'mroonga';
