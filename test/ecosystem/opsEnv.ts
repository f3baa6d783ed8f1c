// Imported first by ops.test.ts, before any module reads the configuration.
process.env.METRICS_TOKEN = 'metrics-token-for-the-tests';
process.env.METRICS_PORT = '3356';
