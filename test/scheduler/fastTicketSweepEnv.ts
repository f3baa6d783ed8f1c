// Imported first by the scheduler tests that run the scheduler worker: ticket sweeps every 200 ms,
// before any module reads the configuration.
process.env.TICKET_SWEEP_EVERY_MS = '200';
