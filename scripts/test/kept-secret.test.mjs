// A secret the launcher keeps with the data is made once: launchers started side by side on one data
// folder (two end-to-end systems, an impatient second `npm start`) all read the same whole secret.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { keptSecret } from '../lib.mjs';

const LIB = pathToFileURL(join(import.meta.dirname, '..', 'lib.mjs')).href;
const RACERS = 12;

/** Runs `keptSecret(file)` in a new process; resolves with what it printed. */
function readInChild(file) {
  const code = `const { keptSecret } = await import(${JSON.stringify(LIB)}); process.stdout.write(keptSecret(${JSON.stringify(file)}));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('exit', (status) => (status === 0 ? resolve(out) : reject(new Error(`a racer exited with ${status}`))));
  });
}

test('processes racing to make a kept secret all read the same 32 random bytes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bns-kept-secret-'));
  try {
    for (let round = 0; round < 3; round++) {
      const file = join(dir, `key-${round}`);
      const read = await Promise.all(Array.from({ length: RACERS }, () => readInChild(file)));
      assert.equal(new Set(read).size, 1, `round ${round}: the racers read ${new Set(read).size} different secrets`);
      assert.equal(Buffer.from(read[0], 'base64').length, 32, `round ${round}: the secret is not 32 bytes`);
      assert.equal(keptSecret(file), read[0], 'a later start reads another secret');
      assert.equal(statSync(file).mode & 0o777, 0o600, 'the secret is readable by others');
    }
    assert.deepEqual(
      readdirSync(dir).filter((f) => !/^key-\d$/.test(f)),
      [],
      'drafts were left behind',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
