/**
 * The project's dependency rules (`npm run lint`, run by CI): layers import only from below.
 *   bottom   config, logger, errors, lib/, db/, redis/
 *   domain   core/, user/, ticket/, selfservice/, mail/, mailbox/, webhooks/, queue/, events ...
 *   edge     http/ (and the resources declared in the areas), workers/
 *   root     wiring.ts, app.ts, server.ts, cli/: what starts a process
 * Type-only imports do not count: they leave nothing at run time.
 */
const BOTTOM = '^src/(db|lib|redis)/|^src/(config|logger|logFormat|errors)\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'No run-time import cycle: module load order must never decide what a module sees.',
      severity: 'error',
      from: {},
      to: { circular: true, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'bottom-knows-no-domain',
      comment: 'db/, lib/, redis/ and the shared modules import nothing above them (seeds live in src/seed/).',
      severity: 'error',
      from: { path: BOTTOM },
      to: { path: '^src/', pathNot: BOTTOM, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'workers-never-reach-http',
      comment: 'A worker process never loads the web layer, however indirectly.',
      severity: 'error',
      from: { path: '^workers/' },
      to: { path: '^src/http/', reachable: true },
    },
    {
      name: 'side-effect-core-knows-no-consumer',
      comment: 'events.ts and the outbox know no subscriber and no job: src/wiring.ts registers them.',
      severity: 'error',
      from: { path: '^src/(events|queue/(outbox|jobs|producer|names|runWorker))\\.ts$' },
      to: { path: '^src/', pathNot: `${BOTTOM}|^src/(events|ops/metrics)\\.ts$|^src/queue/`, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'wiring-only-in-entry-points',
      comment: 'The composition root is imported by what starts a process, nothing else.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(server\\.ts|cli/)' },
      to: { path: '^src/wiring\\.ts$' },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    // Imports as they compile: type-only imports leave nothing at run time and are not followed.
    tsPreCompilationDeps: false,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
  },
};
