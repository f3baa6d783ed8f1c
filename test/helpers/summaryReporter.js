// Ends a run with the plain line CI reads (`jest: N passed, N failed`). Written at exit: jest
// prints its own summary after every reporter's onRunComplete, and this line must come last.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const failedSuites = results.numFailedTestSuites + results.numRuntimeErrorTestSuites;
    const failed = results.numFailedTests + (failedSuites && !results.numFailedTests ? failedSuites : 0);
    const line = `jest: ${results.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
    process.once('exit', () => process.stderr.write(`\n${line}\n`));
  }
}
module.exports = SummaryReporter;
