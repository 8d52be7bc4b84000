// Writes this Jest run's totals to test-output/results/<package>.json for the closing summary of `npm test`.
const { mkdirSync, writeFileSync } = require('node:fs');
const { basename, join } = require('node:path');

class ResultsReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }
  onRunComplete(_contexts, results) {
    const dir = join(__dirname, '..', 'test-output', 'results');
    mkdirSync(dir, { recursive: true });
    const name = `jest-${basename(this.rootDir)}`;
    writeFileSync(
      join(dir, `${name}.json`),
      JSON.stringify({ name, passed: results.numPassedTests, failed: results.numFailedTests + results.numRuntimeErrorTestSuites, skipped: results.numPendingTests + results.numTodoTests }),
    );
  }
}
module.exports = ResultsReporter;
