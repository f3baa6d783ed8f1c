// Imported first by large-bodies.test.ts, before any module reads the configuration: one large
// body (over 4 KiB) at a time.
process.env.LARGE_BODY_BYTES = '4096';
process.env.LARGE_BODY_CONCURRENCY = '1';
