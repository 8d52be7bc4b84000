// Writes this Jest run's totals to test-output/results/<package>.json for the closing summary of `npm test`.
const { mkdirSync, writeFileSync } = require('node:fs');
const { basename, join, relative } = require('node:path');

/** The first three non-empty lines of a failure message (what was expected and received), without terminal colours. */
const firstLine = (text) =>
  String(text ?? '')
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0)
    .slice(0, 3)
    .join(' · ')
    .slice(0, 300);

class ResultsReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }
  onRunComplete(_contexts, results) {
    const dir = join(__dirname, '..', 'test-output', 'results');
    mkdirSync(dir, { recursive: true });
    // A second run of a project (its timed files, alone) keeps its own file beside the first.
    const name = `jest-${basename(this.rootDir)}${process.env.TEST_RESULTS_SUFFIX ?? ''}`;
    // Which tests failed, by file and name, with the first line of the reason: the closing summary
    // prints them, so a CI log that keeps only its tail still says what broke.
    const failures = [];
    // Each file's wall time, so the closing summary can name where the run's minutes go.
    const files = [];
    for (const file of results.testResults) {
      const where = relative(join(__dirname, '..'), file.testFilePath);
      const { start, end } = file.perfStats ?? {};
      if (start && end) files.push({ file: where, seconds: Math.round((end - start) / 100) / 10 });
      if (file.testExecError || (file.failureMessage && file.testResults.length === 0)) {
        failures.push(`${where}: ${firstLine(file.testExecError?.message ?? file.failureMessage)}`);
      }
      for (const t of file.testResults)
        if (t.status === 'failed') failures.push(`${where} › ${t.fullName}: ${firstLine(t.failureMessages[0])}`);
    }
    writeFileSync(
      join(dir, `${name}.json`),
      JSON.stringify({
        name,
        passed: results.numPassedTests,
        failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
        skipped: results.numPendingTests + results.numTodoTests,
        failures,
        files,
      }),
    );
  }
}
module.exports = ResultsReporter;
