{{/* Names ------------------------------------------------------------------------------------------ */}}
{{- define "bns.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* "<fullname>-<component>"; call with (list $ "gateway"). */}}
{{- define "bns.componentName" -}}
{{- printf "%s-%s" (include "bns.fullname" (index . 0)) (index . 1) -}}
{{- end -}}

{{- define "bns.selectorLabels" -}}
app.kubernetes.io/name: {{ (index . 0).Chart.Name }}
app.kubernetes.io/instance: {{ (index . 0).Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "bns.labels" -}}
{{ include "bns.selectorLabels" . }}
app.kubernetes.io/part-of: bns
app.kubernetes.io/version: {{ (index . 0).Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ (index . 0).Release.Service }}
helm.sh/chart: {{ printf "%s-%s" (index . 0).Chart.Name (index . 0).Chart.Version }}
{{- end -}}

{{- define "bns.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "bns.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Image of a BNS component; call with (list $ "gateway"). */}}
{{- define "bns.image" -}}
{{- $ := index . 0 -}}
{{- $component := index . 1 -}}
{{- $override := (index $.Values $component).image -}}
{{- $repository := $override.repository | default (printf "%s%s%s" $.Values.image.registry $.Values.image.repositoryPrefix $component) -}}
{{- $tag := $override.tag | default $.Values.image.tag | default $.Chart.AppVersion -}}
{{- printf "%s:%s" $repository $tag -}}
{{- end -}}

{{/* Services whose pods have a Postgres schema. */}}
{{- define "bns.dbServices" -}}sessions jobs templates dashboard integrations contacts{{- end -}}

{{/* Secret with the per-service role passwords and URLs (hook-created, kept across upgrades). */}}
{{- define "bns.dbSecretName" -}}
{{- printf "%s-db" (include "bns.fullname" .) -}}
{{- end -}}

{{- define "bns.postgresHost" -}}
{{- if eq .Values.postgres.mode "bundled" -}}
{{- printf "%s-postgres" (include "bns.fullname" .) -}}
{{- else -}}
{{- required "postgres.external.host is required with postgres.mode=external" .Values.postgres.external.host -}}
{{- end -}}
{{- end -}}

{{- define "bns.postgresPort" -}}
{{- if eq .Values.postgres.mode "bundled" -}}5432{{- else -}}{{ .Values.postgres.external.port }}{{- end -}}
{{- end -}}

{{/* NATS_URL env entry: the bundled server, an external URL, or a Secret holding one. */}}
{{- define "bns.natsUrlEnv" -}}
- name: NATS_URL
{{- if eq .Values.nats.mode "bundled" }}
  value: {{ printf "nats://%s-nats:4222" (include "bns.fullname" .) | quote }}
{{- else if .Values.nats.external.existingSecret }}
  valueFrom:
    secretKeyRef:
      name: {{ .Values.nats.external.existingSecret }}
      key: {{ .Values.nats.external.existingSecretKey }}
{{- else }}
  value: {{ required "nats.external.url (or nats.external.existingSecret) is required with nats.mode=external" .Values.nats.external.url | quote }}
{{- end }}
{{- end -}}

{{/* Variables every service reads (service-kit COMMON_ENV) plus its PORT; call with (list $ "jobs"). */}}
{{- define "bns.commonEnv" -}}
{{- $ := index . 0 -}}
{{- $component := index . 1 -}}
{{ include "bns.natsUrlEnv" $ }}
- name: LOG_LEVEL
  value: {{ $.Values.logLevel | quote }}
- name: SESSIONS_SHARDS
  value: {{ $.Values.sessions.shards | quote }}
- name: RPC_TIMEOUT_MS
  value: {{ $.Values.rpcTimeoutMs | quote }}
- name: PORT
  value: {{ (index $.Values $component).port | quote }}
- name: METRICS_PORT
  value: {{ $.Values.metrics.port | quote }}
{{- if $.Values.otel.endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ $.Values.otel.endpoint | quote }}
{{- range $name, $value := $.Values.otel.extraEnv }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* DATABASE_URL and DATABASE_POOL_SIZE of a service; call with (list $ "jobs"). */}}
{{- define "bns.databaseEnv" -}}
{{- $ := index . 0 -}}
{{- $component := index . 1 -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
{{- if $.Values.postgres.roles.create }}
      name: {{ include "bns.dbSecretName" $ }}
      key: {{ printf "%s-url" $component }}
{{- else }}
      name: {{ required "postgres.serviceUrlsSecret is required with postgres.roles.create=false" $.Values.postgres.serviceUrlsSecret }}
      key: {{ $component }}
{{- end }}
- name: DATABASE_POOL_SIZE
  value: {{ (index $.Values $component).databasePoolSize | quote }}
{{- end -}}

{{/* A service's own settings (values <component>.env) and raw extraEnv; call with (list $ "jobs"). */}}
{{- define "bns.serviceEnv" -}}
{{- $ := index . 0 -}}
{{- $values := index $.Values (index . 1) -}}
{{- range $name, $value := $values.env }}
- name: {{ $name }}
  value: {{ if kindIs "slice" $value }}{{ join "," $value | quote }}{{ else }}{{ $value | toString | quote }}{{ end }}
{{- end }}
{{- with $values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Init container that waits for NATS (and this service's Postgres login); call with (list $ "jobs" withDb). */}}
{{- define "bns.waitForInit" -}}
{{- $ := index . 0 -}}
{{- $component := index . 1 -}}
- name: wait-for-dependencies
  image: {{ include "bns.image" (list $ $component) }}
  imagePullPolicy: {{ $.Values.image.pullPolicy }}
  command: ["node", "/app/docker/wait-for.mjs"]
  env:
    {{- include "bns.natsUrlEnv" $ | nindent 4 }}
    {{- if index . 2 }}
    {{- include "bns.databaseEnv" (list $ $component) | nindent 4 }}
    {{- end }}
  securityContext:
    {{- toYaml $.Values.containerSecurityContext | nindent 4 }}
  resources:
    requests: { cpu: 10m, memory: 64Mi }
    limits: { memory: 128Mi }
{{- end -}}

{{/* Liveness, readiness and startup probes of a Node service on its PORT. */}}
{{- define "bns.serviceProbes" -}}
startupProbe:
  httpGet: { path: /healthz, port: http }
  periodSeconds: 5
  failureThreshold: 60
livenessProbe:
  httpGet: { path: /healthz, port: http }
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
readinessProbe:
  httpGet: { path: /readyz, port: http }
  periodSeconds: 10
  timeoutSeconds: 5
  failureThreshold: 3
{{- end -}}

{{/* Pod spec parts shared by every BNS pod; call with (list $ "jobs"). */}}
{{- define "bns.podCommon" -}}
{{- $ := index . 0 -}}
{{- $values := index $.Values (index . 1) -}}
serviceAccountName: {{ include "bns.serviceAccountName" $ }}
automountServiceAccountToken: false
{{- with $.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml $.Values.podSecurityContext | nindent 2 }}
{{- with $values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
affinity:
{{- if $values.affinity }}
  {{- toYaml $values.affinity | nindent 2 }}
{{- else }}
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              {{- include "bns.selectorLabels" . | nindent 14 }}
{{- end }}
{{- end -}}

{{/* Origins allowed in Clerk's azp claim: the configured list, else https:// + every ingress host. */}}
{{- define "bns.authorizedParties" -}}
{{- $parties := .Values.gateway.auth.clerk.authorizedParties -}}
{{- if not $parties -}}
{{- range .Values.ingress.hosts }}{{ $parties = append $parties (printf "https://%s" .) }}{{ end -}}
{{- end -}}
{{- join "," $parties -}}
{{- end -}}

{{/* The gateway's own settings the chart derives: auth mode, Clerk values from a Secret, origins, engine. */}}
{{- define "bns.gatewayEnv" -}}
{{- $clerkSecret := .Values.gateway.auth.clerk.existingSecret | default (printf "%s-clerk" (include "bns.fullname" .)) -}}
- name: AUTH_MODE
  value: {{ .Values.gateway.auth.mode | quote }}
{{- if eq .Values.gateway.auth.mode "clerk" }}
{{- range $env, $key := dict "CLERK_ISSUER" "issuer" "CLERK_JWKS_URL" "jwksUrl" "CLERK_JWT_KEY" "jwtKey" }}
- name: {{ $env }}
  valueFrom:
    secretKeyRef:
      name: {{ $clerkSecret }}
      key: {{ $key }}
      optional: true
{{- end }}
- name: CLERK_AUTHORIZED_PARTIES
  value: {{ include "bns.authorizedParties" . | quote }}
{{- end }}
- name: CORS_ORIGINS
  value: {{ join "," .Values.gateway.corsOrigins | quote }}
# The gateway answers the dev-only simulator calls only when the shards run the simulator.
- name: WA_ENGINE
  value: {{ .Values.sessions.engine | quote }}
{{- end -}}

{{/* Inputs of files/db-roles.sh: role prefix and one password per service, from the db Secret. */}}
{{- define "bns.rolePasswordsEnv" -}}
- name: BNS_DB_ROLE_PREFIX
  value: {{ .Values.postgres.roles.prefix | quote }}
- name: BNS_DB_SERVICES
  value: {{ include "bns.dbServices" . | quote }}
{{- range $svc := splitList " " (include "bns.dbServices" .) }}
- name: {{ printf "BNS_DB_PASSWORD_%s" (upper $svc) }}
  valueFrom:
    secretKeyRef:
      name: {{ include "bns.dbSecretName" $ }}
      key: {{ printf "%s-password" $svc }}
{{- end }}
{{- end -}}

{{/* NetworkPolicy egress rules. */}}
{{- define "bns.egressDns" -}}
- to:
    {{- toYaml .Values.networkPolicy.dns.peers | nindent 4 }}
  ports:
    - { port: {{ .Values.networkPolicy.dns.port }}, protocol: UDP }
    - { port: {{ .Values.networkPolicy.dns.port }}, protocol: TCP }
{{- end -}}

{{- define "bns.egressNats" -}}
{{- $ := index . 0 -}}
- ports:
    - { port: {{ index . 1 }}, protocol: TCP }
{{- if eq $.Values.nats.mode "bundled" }}
  to:
    - podSelector:
        matchLabels:
          {{- include "bns.selectorLabels" (list $ "nats") | nindent 10 }}
{{- else if $.Values.nats.external.networkPolicyPeers }}
  to:
    {{- toYaml $.Values.nats.external.networkPolicyPeers | nindent 4 }}
{{- end }}
{{- end -}}

{{- define "bns.egressPostgres" -}}
{{- $ := index . 0 -}}
- ports:
    - { port: {{ index . 1 }}, protocol: TCP }
{{- if eq $.Values.postgres.mode "bundled" }}
  to:
    - podSelector:
        matchLabels:
          {{- include "bns.selectorLabels" (list $ "postgres") | nindent 10 }}
{{- else if $.Values.postgres.external.networkPolicyPeers }}
  to:
    {{- toYaml $.Values.postgres.external.networkPolicyPeers | nindent 4 }}
{{- end }}
{{- end -}}

{{- define "bns.egressOtel" -}}
{{- if .Values.otel.endpoint }}
- ports:
    - { port: {{ .Values.otel.port }}, protocol: TCP }
{{- with .Values.otel.networkPolicyPeers }}
  to:
    {{- toYaml . | nindent 4 }}
{{- end }}
{{- end }}
{{- end -}}

{{- /* Prometheus scrape annotations of a service pod: /metrics on its metrics port. Call with $. */ -}}
{{- define "bns.metricsAnnotations" -}}
{{- if .Values.metrics.podAnnotations }}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .Values.metrics.port | quote }}
prometheus.io/path: /metrics
{{- end }}
{{- end -}}

{{- /*
The container ports of a service: `http` (API on the gateway, probes everywhere) and `metrics`
(METRICS_PORT, Prometheus only). Refuses a component port equal to the metrics port. (list $ "jobs")
*/ -}}
{{- define "bns.servicePorts" -}}
{{- $ := index . 0 -}}
{{- $component := index . 1 -}}
{{- $port := (index $.Values $component).port -}}
{{- if eq (int $port) (int $.Values.metrics.port) }}
{{- fail (printf "%s.port and metrics.port are both %v: a service's http and metrics ports must differ" $component $port) }}
{{- end -}}
- name: http
  containerPort: {{ $port }}
- name: metrics
  containerPort: {{ $.Values.metrics.port }}
{{- end -}}

{{- /*
A headless Service exposing only a component's metrics port, for the ServiceMonitor (label
bns-endpoint: metrics). The component's own Service never carries that port: the gateway's is what the
Ingress sends the public to. Call with (list $ "gateway").
*/ -}}
{{- define "bns.metricsService" -}}
{{- $ := index . 0 -}}
{{- $component := index . 1 -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "bns.componentName" (list $ $component) }}-metrics
  labels:
    {{- include "bns.labels" (list $ $component) | nindent 4 }}
    bns-endpoint: metrics
spec:
  clusterIP: None
  selector:
    {{- include "bns.selectorLabels" (list $ $component) | nindent 4 }}
  ports:
    - name: metrics
      port: {{ $.Values.metrics.port }}
      targetPort: metrics
{{- end -}}

{{- /*
NetworkPolicy ingress rule of a pod's metrics port: from the monitoring namespace
(networkPolicy.monitoring) only. Call with $.
*/ -}}
{{- define "bns.ingressMetrics" -}}
{{- $m := .Values.networkPolicy.monitoring -}}
{{- if .Values.networkPolicy.monitoringFrom }}
{{- fail "networkPolicy.monitoringFrom was replaced by networkPolicy.monitoring.namespaceSelector (and .podSelector): only that namespace may reach the metrics ports, and no pod the services' http ports" }}
{{- end -}}
- ports:
    - { port: metrics, protocol: TCP }
  from:
    - namespaceSelector:
        {{- toYaml $m.namespaceSelector | nindent 8 }}
      {{- with $m.podSelector }}
      podSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end -}}
