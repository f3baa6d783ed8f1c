import { execFileSync } from 'node:child_process';
// Imported first by ops.test.ts, before any module reads the configuration.
process.env.METRICS_TOKEN = 'metrics-token-for-the-tests';
// A port free now (the system picks it), found synchronously: the configuration is read at import.
process.env.METRICS_PORT = execFileSync(process.execPath, ['-e',
  "const s = require('net').createServer().listen(0, '127.0.0.1', () => { process.stdout.write(String(s.address().port)); s.close(); })"]).toString();
