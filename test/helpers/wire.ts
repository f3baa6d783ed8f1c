// Runs before each test file (setupFilesAfterEnv): the subscribers and cache watchers are
// registered, as the entry points do, in a beforeAll that runs before the file's own hooks but
// after its imports, so the environment modules a file imports first are read by config().
beforeAll(() => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require('../../src/wiring') as typeof import('../../src/wiring')).wire();
});
