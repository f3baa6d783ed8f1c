// Imported first by the export tests, before any module reads the configuration: a short hold-back
// (2 s: timestamps are whole seconds, so the guaranteed margin is one second less).
process.env.EXPORT_SETTLE_SECONDS = '2';
