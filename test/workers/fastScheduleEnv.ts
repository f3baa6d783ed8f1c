// Imported first by scheduler.test.ts: schedules every 200 ms, before any module reads the configuration.
process.env.BAN_EXPIRY_EVERY_MS = '200';
process.env.OUTBOX_SWEEP_EVERY_MS = '200';
process.env.OUTBOX_SWEEP_AFTER_MS = '0';
