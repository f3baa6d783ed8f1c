// Imported first by events.test.ts, before any module reads the configuration: a short settle time,
// so the test can watch a gap left by a rolled-back insert be passed.
process.env.EVENT_FEED_SETTLE_SECONDS = '1';
