import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { chromiumProcesses } from '../sessions.metrics.js';

describe('chromiumProcesses', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bns-chromium-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('counts the Chromium processes under this process, children of children included, and nothing else', async () => {
    // A program named like the browser (a copy of sleep), once as a child and once as a grandchild.
    const fake = join(dir, 'chromium');
    copyFileSync('/bin/sleep', fake);
    const before = chromiumProcesses();
    const child = spawn(fake, ['30']);
    // Its own process group, so the grandchildren go with it at the end.
    const shell = spawn('sh', ['-c', `"${fake}" 30 & "${fake}" 30 & wait`], { detached: true });
    const other = spawn('/bin/sleep', ['30']);
    try {
      let seen = 0;
      for (let i = 0; i < 50 && seen !== before + 3; i++) {
        await new Promise((r) => setTimeout(r, 50));
        seen = chromiumProcesses();
      }
      expect(seen).toBe(before + 3);
    } finally {
      for (const p of [child, other]) p.kill('SIGKILL');
      process.kill(-shell.pid!, 'SIGKILL');
    }
  });
});
