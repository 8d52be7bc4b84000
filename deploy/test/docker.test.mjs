// The Dockerfiles and docker/compose.yaml follow the image rules: multi-stage, pinned base images,
// non-root, a health check, production dependencies only, nothing secret in a layer. There is no
// Docker engine here, so the rules are read from the files; the scripts the images run are exercised
// for real in scripts.test.mjs.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DOCKER_DIR, REPO_ROOT, SERVICES, envVariablesOf, parseYamlDocuments, read } from '../test-support/support.mjs';

const IMAGES = [...SERVICES, 'web'];

/** Instructions of a Dockerfile, continuation lines joined, comments dropped, grouped by stage. */
export function parseDockerfile(text) {
  const instructions = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!pending && (line === '' || line.startsWith('#'))) continue;
    if (line.startsWith('#')) continue;
    pending += (pending ? ' ' : '') + line.replace(/\\$/, '').trim();
    if (line.endsWith('\\')) continue;
    const [, op, args] = pending.match(/^(\S+)\s*(.*)$/);
    instructions.push({ op: op.toUpperCase(), args });
    pending = '';
  }
  const stages = [];
  for (const ins of instructions) {
    if (ins.op === 'FROM') {
      const [, image, name] = ins.args.match(/^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i);
      stages.push({ image, name: name?.toLowerCase(), instructions: [] });
    } else if (stages.length > 0) {
      stages.at(-1).instructions.push(ins);
    }
  }
  return { instructions, stages };
}

const SECRET_NAME = /(PASSWORD|PASSWD|SECRET|TOKEN|PRIVATE|CREDENTIAL|_KEY$|^KEY$|API_KEY)/i;
// Public by design: Clerk sends the publishable key to every browser.
const PUBLIC_NAMES = new Set(['VITE_CLERK_PUBLISHABLE_KEY']);
const SECRET_FILE = /(^|\/)(\.env(\..*)?|.*\.pem|.*\.key|id_rsa.*|.*secret.*|.*credential.*|\.npmrc\.local)$/i;

/** Problems of one Dockerfile against the image rules; [] when it follows them. */
export function dockerfileProblems(text) {
  const problems = [];
  const { instructions, stages } = parseDockerfile(text);
  const stageNames = new Set();
  if (stages.length < 2) problems.push('not multi-stage');
  for (const stage of stages) {
    const image = stage.image;
    if (!stageNames.has(image.toLowerCase())) {
      if (image.includes('$')) problems.push(`base image ${image} is a variable`);
      else if (!/@sha256:[0-9a-f]{64}$/.test(image)) {
        const tag = image.includes(':') ? image.slice(image.lastIndexOf(':') + 1) : undefined;
        if (!tag) problems.push(`base image ${image} has no tag`);
        else if (tag === 'latest') problems.push(`base image ${image} uses latest`);
        // A major-only tag (node:20) floats across minor releases: ask for at least major.minor.
        else if (!/\d+\.\d+/.test(tag)) problems.push(`base image ${image} is not pinned to a version`);
      }
    }
    if (stage.name) stageNames.add(stage.name);
  }
  const final = stages.at(-1);
  const user = final?.instructions.filter((i) => i.op === 'USER').at(-1)?.args;
  if (!user) problems.push('final stage has no USER');
  else {
    const uid = user.split(':')[0];
    if (!/^\d+$/.test(uid)) problems.push(`USER ${user} is not numeric (runAsNonRoot cannot verify it)`);
    else if (Number(uid) === 0) problems.push('USER is root');
  }
  const healthcheck = final?.instructions.find((i) => i.op === 'HEALTHCHECK');
  if (!healthcheck || /^NONE\b/i.test(healthcheck.args)) problems.push('final stage has no HEALTHCHECK');

  for (const ins of instructions) {
    if (ins.op === 'COPY' || ins.op === 'ADD') {
      const parts = ins.args.split(/\s+/).filter((p) => !p.startsWith('--'));
      const sources = parts.slice(0, -1);
      for (const src of sources) {
        if (src === '.' || src === './' || src === '*')
          problems.push(`${ins.op} ${ins.args}: copies the whole build context`);
        if (SECRET_FILE.test(src)) problems.push(`${ins.op} ${src}: copies a secret file`);
        if (ins.op === 'ADD' && /^https?:/.test(src)) problems.push(`ADD ${src}: downloads unpinned content`);
      }
    }
    if (ins.op === 'ENV' || ins.op === 'ARG') {
      for (const [, name] of ins.args.matchAll(/(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)(?==|\s|$)/g)) {
        if (SECRET_NAME.test(name) && !PUBLIC_NAMES.has(name))
          problems.push(`${ins.op} ${name}: a secret must not be baked into an image`);
      }
    }
  }
  return problems;
}

/** Problems with production-only dependencies in a Node service image. */
export function productionDepsProblems(text) {
  const problems = [];
  const { stages } = parseDockerfile(text);
  const final = stages.at(-1);
  const byName = new Map(stages.filter((s) => s.name).map((s) => [s.name, s]));
  for (const ins of final.instructions.filter((i) => i.op === 'COPY' && /--from=/.test(i.args))) {
    const from = ins.args.match(/--from=(\S+)/)[1].toLowerCase();
    const source = byName.get(from);
    const paths = ins.args
      .split(/\s+/)
      .filter((p) => !p.startsWith('--'))
      .slice(0, -1);
    const installs = (source?.instructions ?? [])
      .filter((i) => i.op === 'RUN' && /npm (ci|install)\b/.test(i.args))
      .map((i) => i.args);
    for (const path of paths) {
      if (/node_modules/.test(path)) {
        if (installs.length === 0) problems.push(`node_modules copied from ${from}, which installs nothing`);
        for (const cmd of installs)
          if (!/--omit=dev/.test(cmd))
            problems.push(`node_modules copied from ${from}, whose install keeps devDependencies: ${cmd}`);
      } else if (installs.some((cmd) => !/--omit=dev/.test(cmd)) && !/(\/dist\/?$|package\.json$)/.test(path)) {
        problems.push(
          `${path} copied from ${from}, a stage with devDependencies (only dist/ and package.json may come from there)`,
        );
      }
    }
  }
  if (!final.instructions.some((i) => i.op === 'COPY' && /node_modules/.test(i.args)))
    problems.push('the runtime stage gets no node_modules');
  return problems;
}

describe('Dockerfiles', () => {
  for (const image of IMAGES) {
    const file = join(DOCKER_DIR, `${image}.Dockerfile`);
    describe(`${image}.Dockerfile`, () => {
      const text = existsSync(file) ? read(file) : '';

      test('exists', () => assert.ok(existsSync(file), file));

      test('multi-stage, pinned base images, non-root numeric USER, HEALTHCHECK, no secrets', () => {
        assert.deepEqual(dockerfileProblems(text), []);
      });

      test('Node stages run Node 24 LTS, the runtime of CI and of npm start (scripts/runtime.mjs)', () => {
        const node = parseDockerfile(text)
          .stages.map((s) => s.image)
          .filter((i) => /^node:/.test(i));
        assert.ok(node.length > 0, 'no node base image');
        for (const image of node) assert.match(image, /^node:24\.\d+\.\d+-/, image);
      });

      test('every file it copies from the repository exists', () => {
        const { instructions } = parseDockerfile(text);
        for (const ins of instructions.filter((i) => (i.op === 'COPY' || i.op === 'ADD') && !/--from=/.test(i.args))) {
          const sources = ins.args
            .split(/\s+/)
            .filter((p) => !p.startsWith('--'))
            .slice(0, -1);
          for (const src of sources) assert.ok(existsSync(join(REPO_ROOT, src)), `${src} (${ins.op} ${ins.args})`);
        }
      });

      test('has a Dockerfile-specific .dockerignore that keeps local state and secrets out of the context', () => {
        const ignore = read(join(DOCKER_DIR, `${image}.Dockerfile.dockerignore`));
        for (const pattern of ['**/.env', '**/.env.*', '**/node_modules', '**/dist', '**/*.pem']) {
          assert.ok(ignore.split('\n').includes(pattern), `${pattern} missing`);
        }
      });

      if (image === 'web') {
        test('serves the built app from an unprivileged nginx with the SPA config', () => {
          const { stages } = parseDockerfile(text);
          assert.match(stages.at(-1).image, /^nginxinc\/nginx-unprivileged:/);
          assert.match(text, /COPY docker\/nginx\/web\.conf/);
          assert.match(text, /COPY --from=build \/app\/web\/dist \/usr\/share\/nginx\/html/);
          assert.match(read(join(DOCKER_DIR, 'nginx/web.conf')), /try_files \$uri \$uri\/ \/index\.html;/);
        });
        return;
      }

      test('installs production dependencies only into the runtime image', () => {
        assert.deepEqual(productionDepsProblems(text), []);
      });

      test('builds and ships every workspace library the service depends on', () => {
        const pkg = JSON.parse(read(join(REPO_ROOT, 'services', image, 'package.json')));
        const libs = Object.keys(pkg.dependencies ?? {})
          .filter((d) => d.startsWith('@bns/'))
          .map((d) => d.slice('@bns/'.length));
        assert.ok(libs.length > 0);
        for (const lib of libs) {
          assert.match(text, new RegExp(`tsc -p libs/${lib}/tsconfig\\.build\\.json`), `${lib} not compiled`);
          assert.match(text, new RegExp(`COPY --from=build /app/libs/${lib}/dist`), `${lib} dist not shipped`);
          assert.match(text, new RegExp(`prune-workspaces\\.mjs libs/contracts libs/service-kit services/${image}`));
        }
        assert.match(text, new RegExp(`CMD \\[[^\\]]*"services/${image}/dist/main\\.js"\\]`));
        // The image runs the service with the Node flags its package.json names (the launcher reads them there).
        const flags = pkg.nodeFlags ?? [];
        const cmd = [...text.matchAll(/^CMD (\[.*\])$/gm)].at(-1)?.[1];
        assert.deepEqual(JSON.parse(cmd), ['node', ...flags, `services/${image}/dist/main.js`]);
        // … and the environment it names (nodeEnv), set by ENV in the image's last stage.
        const env = Object.entries(pkg.nodeEnv ?? {});
        const lastStage = text.slice(text.lastIndexOf('\nFROM '));
        for (const [k, v] of env)
          assert.match(lastStage, new RegExp(`^ENV ${k}=${v}$`, 'm'), `${k} not set in the image`);
        assert.equal(
          pkg.scripts.start,
          [...env.map(([k, v]) => `${k}=${v}`), 'node', ...flags, 'dist/main.js'].join(' '),
        );
      });
    });
  }

  test('sessions carries the Debian Chromium and never lets puppeteer download one', () => {
    const text = read(join(DOCKER_DIR, 'sessions.Dockerfile'));
    const { stages } = parseDockerfile(text);
    const runtime = stages
      .at(-1)
      .instructions.map((i) => `${i.op} ${i.args}`)
      .join('\n');
    assert.match(runtime, /apt-get install [^\n]*\bchromium\b/);
    assert.match(runtime, /CHROMIUM_PATH=\/usr\/bin\/chromium/);
    for (const stage of stages) {
      const env = stage.instructions
        .filter((i) => i.op === 'ENV')
        .map((i) => i.args)
        .join(' ');
      if (stage.instructions.some((i) => /npm (ci|install)/.test(i.args)))
        assert.match(env, /PUPPETEER_SKIP_DOWNLOAD=true/, stage.name);
    }
    assert.match(runtime, /tini/, 'Chromium children need an init process to be reaped');
  });

  test('the .npmrc copied into build stages holds no registry credential', () => {
    assert.doesNotMatch(read(join(REPO_ROOT, '.npmrc')), /_auth|_password|token/i);
  });
});

describe('the rule checks catch what they are for', () => {
  const good = read(join(DOCKER_DIR, 'jobs.Dockerfile'));
  const cases = [
    [
      'a latest base image',
      (t) => t.replace('FROM node:24.21.0-bookworm-slim AS runtime', 'FROM node:latest AS runtime'),
      /uses latest/,
    ],
    [
      'a floating major tag',
      (t) => t.replace('FROM node:24.21.0-bookworm-slim AS runtime', 'FROM node:20-bookworm-slim AS runtime'),
      /not pinned to a version/,
    ],
    [
      'an untagged base image',
      (t) => t.replace('FROM node:24.21.0-bookworm-slim AS build', 'FROM node AS build'),
      /has no tag/,
    ],
    ['running as root', (t) => t.replace('USER 1000:1000', 'USER root'), /not numeric/],
    ['uid 0', (t) => t.replace('USER 1000:1000', 'USER 0'), /USER is root/],
    ['no USER', (t) => t.replace(/^USER .*$/m, ''), /no USER/],
    ['no HEALTHCHECK', (t) => t.replace(/^HEALTHCHECK .*$/m, ''), /no HEALTHCHECK/],
    ['HEALTHCHECK NONE', (t) => t.replace(/^HEALTHCHECK .*$/m, 'HEALTHCHECK NONE'), /no HEALTHCHECK/],
    ['COPY . .', (t) => t.replace('COPY libs/contracts/ libs/contracts/', 'COPY . .'), /whole build context/],
    ['COPY .env', (t) => t.replace('COPY libs/contracts/ libs/contracts/', 'COPY .env ./'), /secret file/],
    [
      'a baked password',
      (t) => t.replace('ENV NODE_ENV=production', 'ENV DATABASE_PASSWORD=hunter2 NODE_ENV=production'),
      /DATABASE_PASSWORD/,
    ],
    ['a single stage', (t) => t.slice(t.indexOf('FROM node:24.21.0-bookworm-slim AS runtime')), /not multi-stage/],
  ];
  for (const [what, mutate, expected] of cases) {
    test(what, () => {
      const broken = mutate(good);
      assert.notEqual(broken, good, 'the mutation did not apply');
      assert.match(dockerfileProblems(broken).join('\n'), expected);
    });
  }
  test('node_modules from a stage with devDependencies', () => {
    const broken = good.replace(
      'COPY --from=prod-deps /app/node_modules node_modules/',
      'COPY --from=build /app/node_modules node_modules/',
    );
    assert.notEqual(broken, good);
    assert.match(productionDepsProblems(broken).join('\n'), /keeps devDependencies/);
  });
  test('sources copied from the build stage', () => {
    const broken = good.replace(
      'COPY --from=build /app/services/jobs/dist services/jobs/dist/',
      'COPY --from=build /app/services/jobs services/jobs/',
    );
    assert.notEqual(broken, good);
    assert.match(productionDepsProblems(broken).join('\n'), /only dist\/ and package\.json/);
  });
});

describe('docker/compose.yaml', () => {
  const compose = parseYamlDocuments(read(join(DOCKER_DIR, 'compose.yaml')), 'compose.yaml')[0];
  const services = compose.services;

  test('runs Postgres, NATS with JetStream, the role script, every service and the web', () => {
    assert.match(services.postgres.image, /^postgres:\d+(\.\d+)?-/);
    assert.match(services.nats.image, /^nats:\d+\.\d+\.\d+/);
    assert.ok(services.nats.command.includes('--jetstream'));
    assert.ok(services['db-roles'].volumes.some((v) => v.startsWith('../deploy/helm/files/db-roles.sh:')));
    assert.ok(existsSync(join(REPO_ROOT, 'deploy/helm/files/db-roles.sh')));
    for (const name of ['gateway', 'jobs', 'templates', 'dashboard', 'integrations', 'contacts', 'web']) {
      assert.ok(services[name], name);
      assert.ok(existsSync(join(DOCKER_DIR, '..', services[name].build.dockerfile)), services[name].build.dockerfile);
    }
  });

  test('sessions shards 0..n-1 match SESSIONS_SHARDS of every service', () => {
    const shards = Object.entries(services).filter(([n]) => /^sessions-\d+$/.test(n));
    const n = shards.length;
    assert.ok(n >= 1);
    assert.deepEqual(shards.map(([, s]) => Number(s.environment.SHARD_INDEX)).sort(), [...Array(n).keys()]);
    for (const [name, s] of Object.entries(services).filter(([, s]) => s.environment?.NATS_URL)) {
      assert.equal(Number(s.environment.SESSIONS_SHARDS), n, name);
    }
  });

  test('each service logs in to Postgres as its own role, and sets only variables it reads', () => {
    for (const [name, s] of Object.entries(services)) {
      const service = name.replace(/-\d+$/, '');
      if (!SERVICES.includes(service)) continue;
      const known = envVariablesOf(service);
      const unknown = Object.keys(s.environment).filter((v) => !known.includes(v) && !v.startsWith('OTEL_'));
      assert.deepEqual(unknown, [], `${name} sets variables it does not read`);
      if (service !== 'gateway')
        assert.match(s.environment.DATABASE_URL, new RegExp(`^postgres://bns_${service}:`), name);
    }
  });
});
