// Imported first by processes.test.ts, before any module reads the configuration: queues of its
// own. Its workers count the jobs they complete, and the worker's usual queues can still hold jobs
// earlier files of this jest worker left (webhook deliveries still retrying). The name stays
// `<prefix><run>_<number>`, so the run's cleanup drops its keys with the rest.
process.env.QUEUE_PREFIX = `${process.env.QUEUE_PREFIX}000`;
