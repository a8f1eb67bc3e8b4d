{{/*
Names and labels, the rendered bridge.yaml, and the rules values.schema.json cannot express.
*/}}

{{- define "bridge.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "bridge.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "bridge.selectorLabels" -}}
app.kubernetes.io/name: {{ include "bridge.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* bridge.serverSelector selects the replicas of bridge run (not the migration Job's pod). */}}
{{- define "bridge.serverSelector" -}}
{{ include "bridge.selectorLabels" . }}
app.kubernetes.io/component: server
{{- end }}

{{- define "bridge.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "bridge.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: transcript-bridge
{{- end }}

{{- define "bridge.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
{{- end }}

{{- define "bridge.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "bridge.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Where the chart mounts its files: the configuration and the Secrets named in secrets. */}}
{{- define "bridge.configDir" -}}/etc/bridge{{- end }}
{{- define "bridge.secretsDir" -}}/run/secrets/bridge{{- end }}

{{/*
bridge.validate fails the render on what the schema cannot say: SQLite with more than one
replica, PostgreSQL without its DSN, a webhook secret for an endpoint that is not configured.
*/}}
{{- define "bridge.validate" -}}
{{- if and (eq .Values.store.driver "sqlite") (gt (int .Values.replicaCount) 1) }}
{{- fail (printf "replicaCount: %d replicas need store.driver postgres: the embedded SQLite is one file on one machine (docs/kubernetes.md, \"Scale\")" (int .Values.replicaCount)) }}
{{- end }}
{{- if and (eq .Values.store.driver "postgres") (not .Values.secrets.storeDSN.name) }}
{{- fail "secrets.storeDSN.name: required with store.driver postgres: the Secret holding postgres://user:password@host:5432/db" }}
{{- end }}
{{- $c := .Values.config | default dict }}
{{- if hasKey $c "store" }}
{{- fail "config.store: set by the chart: choose store.driver, and name the DSN's Secret in secrets.storeDSN" }}
{{- end }}
{{- if hasKey (get $c "api" | default dict) "key" }}
{{- fail "config.api.key: a secret in values would land in a ConfigMap: put the key in a Secret and name it in secrets.apiKey" }}
{{- end }}
{{- $server := get $c "server" | default dict }}
{{- range list "addr" "metrics_addr" }}
{{- if hasKey $server . }}
{{- fail (printf "config.server.%s: set by the chart (http on 8080, metrics and /readyz on 9090; service.port and service.metricsPort are the Service's)" .) }}
{{- end }}
{{- end }}
{{- if contains "@" (get (get $c "bus" | default dict) "url" | default "" | toString) }}
{{- fail "config.bus.url: carries credentials (user@ or token@): put the URL in a Secret and name it in secrets.busURL" }}
{{- end }}
{{- $names := list }}
{{- range $i, $w := (get $c "webhooks" | default list) }}
{{- $names = append $names $w.name }}
{{- if hasKey $w "secret" }}
{{- fail (printf "config.webhooks[%d].secret: a secret in values would land in a ConfigMap: put it in a Secret and name it in secrets.webhooks.%s" $i $w.name) }}
{{- end }}
{{- range $h, $_ := ($w.headers | default dict) }}
{{- if eq (lower $h) "authorization" }}
{{- fail (printf "config.webhooks[%d].headers.%s: a credential in values would land in a ConfigMap: set it from a Secret with extraEnv (BRIDGE_WEBHOOKS__%d__HEADERS__AUTHORIZATION, valueFrom.secretKeyRef)" $i $h $i) }}
{{- end }}
{{- end }}
{{- end }}
{{- range $endpoint, $_ := .Values.secrets.webhooks }}
{{- if not (has $endpoint $names) }}
{{- fail (printf "secrets.webhooks.%s: no endpoint named %q in config.webhooks (%s)" $endpoint $endpoint (join ", " $names)) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
bridge.config is bridge.yaml: config as given, with what the chart owns set: the store (the
SQLite file on the data volume, or the DSN's Secret), the metrics listener, and the *_file
setting of each Secret named in secrets. server.addr comes from the container's environment,
as in the image (BRIDGE_SERVER__ADDR wins over any file).
*/}}
{{- define "bridge.config" -}}
{{- $dir := include "bridge.secretsDir" . }}
{{- $s := .Values.secrets }}
{{- $c := deepCopy (.Values.config | default dict) }}
{{- $api := deepCopy (get $c "api" | default dict) }}
{{- if $s.apiKey.name }}
{{- $_ := set $api "key_file" (printf "%s/api-key" $dir) }}
{{- end }}
{{- if $api }}
{{- $_ := set $c "api" $api }}
{{- end }}
{{- $store := dict "driver" .Values.store.driver }}
{{- if eq .Values.store.driver "postgres" }}
{{- $_ := set $store "dsn_file" (printf "%s/store-dsn" $dir) }}
{{- else }}
{{- $_ := set $store "dsn" "./bridge.db" }}
{{- end }}
{{- $_ := set $c "store" $store }}
{{- if $s.busURL.name }}
{{- $bus := deepCopy (get $c "bus" | default dict) }}
{{- $_ := set $bus "url_file" (printf "%s/bus-url" $dir) }}
{{- $_ := set $c "bus" $bus }}
{{- end }}
{{- $server := deepCopy (get $c "server" | default dict) }}
{{- $_ := set $server "metrics_addr" "0.0.0.0:9090" }}
{{- if $s.adminToken.name }}
{{- $_ := set $server "admin_token_file" (printf "%s/admin-token" $dir) }}
{{- end }}
{{- $_ := set $c "server" $server }}
{{- if hasKey $c "webhooks" }}
{{- $hooks := list }}
{{- range $c.webhooks }}
{{- $w := deepCopy . }}
{{- if hasKey $s.webhooks $w.name }}
{{- $_ := set $w "secret_file" (printf "%s/webhook-%s" $dir $w.name) }}
{{- end }}
{{- $hooks = append $hooks $w }}
{{- end }}
{{- $_ := set $c "webhooks" $hooks }}
{{- end }}
{{- toYaml $c }}
{{- end }}

{{/*
bridge.secretSources are the projected volume's sources: each Secret named in secrets, its key
as the file the matching *_file setting reads.
*/}}
{{- define "bridge.secretSources" -}}
{{- $s := .Values.secrets }}
{{- range $file, $ref := dict "api-key" $s.apiKey "store-dsn" $s.storeDSN "admin-token" $s.adminToken "bus-url" $s.busURL }}
{{- if $ref.name }}
- secret:
    name: {{ $ref.name }}
    items:
      - key: {{ $ref.key }}
        path: {{ $file }}
{{- end }}
{{- end }}
{{- range $endpoint, $ref := $s.webhooks }}
- secret:
    name: {{ $ref.name }}
    items:
      - key: {{ $ref.key }}
        path: webhook-{{ $endpoint }}
{{- end }}
{{- end }}

{{/* bridge.hasSecrets says whether any Secret is projected (the volume needs a source). */}}
{{- define "bridge.hasSecrets" -}}
{{- if include "bridge.secretSources" . | trim }}true{{ end }}
{{- end }}

{{/*
bridge.podSecurityContext and bridge.securityContext: the image's user 65532, never root, no
privilege escalation, no capability, a read-only root filesystem (/data, /tmp and the mounts
are the only places written), the runtime's seccomp profile.
*/}}
{{- define "bridge.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
fsGroupChangePolicy: OnRootMismatch
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "bridge.securityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* bridge.env is the environment of the bridge's containers: the log format and level, then extraEnv. */}}
{{- define "bridge.env" -}}
- name: BRIDGE_LOG_FORMAT
  value: {{ .Values.log.format | quote }}
- name: BRIDGE_LOG_LEVEL
  value: {{ .Values.log.level | quote }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}
