{{/* Names, labels and the pieces every dradash container shares. */}}

{{- define "dradash.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "dradash.fullname" -}}
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

{{- define "dradash.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "dradash.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Selector labels of one component: include "dradash.selectorLabels" (list . "web") */}}
{{- define "dradash.selectorLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ include "dradash.name" $root }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "dradash.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "dradash.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "dradash.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{- define "dradash.webServiceName" -}}
{{- printf "%s-web" (include "dradash.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "dradash.leaseName" -}}
{{- .Values.mirror.leaderElection.leaseName | default (printf "%s-mirror" (include "dradash.fullname" .)) }}
{{- end }}

{{/* Where each secret value comes from: [secret name, key]. The chart's own Secret is the fullname. */}}
{{- define "dradash.databaseSecret" -}}
{{- .Values.database.existingSecret | default (include "dradash.fullname" .) }}
{{- end }}
{{- define "dradash.redisSecret" -}}
{{- .Values.redis.existingSecret | default (include "dradash.fullname" .) }}
{{- end }}
{{- define "dradash.secretKeySecret" -}}
{{- .Values.secretKey.existingSecret | default (include "dradash.fullname" .) }}
{{- end }}
{{- define "dradash.oidcSecret" -}}
{{- .Values.oidc.existingSecret | default (include "dradash.fullname" .) }}
{{- end }}

{{/* The host names Django accepts: the ingress hosts, the web Service's names (in-cluster clients and the
kubelet's probes, which send the Service name as Host), and allowedHosts. */}}
{{- define "dradash.allowedHosts" -}}
{{- $svc := include "dradash.webServiceName" . }}
{{- $hosts := list $svc (printf "%s.%s" $svc .Release.Namespace) (printf "%s.%s.svc" $svc .Release.Namespace) (printf "%s.%s.svc.%s" $svc .Release.Namespace .Values.clusterDomain) }}
{{- if .Values.ingress.enabled }}
{{- $hosts = concat .Values.ingress.hosts $hosts }}
{{- end }}
{{- concat $hosts .Values.allowedHosts | uniq | join "," }}
{{- end }}

{{- define "dradash.csrfTrustedOrigins" -}}
{{- $origins := list }}
{{- if .Values.ingress.enabled }}
{{- $tlsHosts := list }}
{{- range .Values.ingress.tls }}{{ $tlsHosts = concat $tlsHosts .hosts }}{{ end }}
{{- range .Values.ingress.hosts }}
{{- $origins = append $origins (printf "%s://%s" (ternary "https" "http" (has . $tlsHosts)) .) }}
{{- end }}
{{- end }}
{{- concat $origins .Values.csrfTrustedOrigins | uniq | join "," }}
{{- end }}

{{/* The environment of every dradash container (see the table at the top of values.yaml). */}}
{{- define "dradash.env" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "dradash.databaseSecret" . }}
      key: {{ .Values.database.existingSecretKey }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "dradash.redisSecret" . }}
      key: {{ .Values.redis.existingSecretKey }}
- name: DRADASH_SECRET_KEY_FILE
  value: /etc/dradash/secret-key/{{ .Values.secretKey.existingSecretKey }}
- name: DRADASH_ALLOWED_HOSTS
  value: {{ include "dradash.allowedHosts" . | quote }}
- name: DRADASH_CSRF_TRUSTED_ORIGINS
  value: {{ include "dradash.csrfTrustedOrigins" . | quote }}
- name: DRADASH_KUBECONFIG
  value: ""
- name: DRADASH_EMBEDDED_WORKER
  value: "false"
- name: DRADASH_DEBUG
  value: "false"
- name: DRADASH_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: DRADASH_WHATIF_TIME_LIMIT
  value: {{ .Values.worker.whatifTimeLimitSeconds | quote }}
- name: DRADASH_POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "dradash.impersonationEnv" -}}
- name: DRADASH_IMPERSONATION_ENABLED
  value: {{ .Values.impersonation.enabled | toString | quote }}
{{- if .Values.impersonation.enabled }}
- name: DRADASH_IMPERSONATION_USER_PREFIX
  value: {{ .Values.impersonation.userPrefix | quote }}
- name: DRADASH_IMPERSONATION_GROUP_PREFIX
  value: {{ .Values.impersonation.groupPrefix | quote }}
- name: DRADASH_IMPERSONATION_ALLOWED_GROUPS
  value: {{ .Values.impersonation.allowedGroups | join "," | quote }}
{{- end }}
{{- end }}

{{- define "dradash.oidcEnv" -}}
{{- $o := .Values.oidc }}
- name: DRADASH_OIDC_ENABLED
  value: {{ $o.enabled | toString | quote }}
{{- if $o.enabled }}
- name: DRADASH_OIDC_CLIENT_ID
  value: {{ required "oidc.clientId is required when oidc.enabled" $o.clientId | quote }}
- name: DRADASH_OIDC_CLIENT_SECRET_FILE
  value: /etc/dradash/oidc/client-secret
- name: DRADASH_OIDC_AUTHORIZATION_ENDPOINT
  value: {{ required "oidc.authorizationEndpoint is required when oidc.enabled" $o.authorizationEndpoint | quote }}
- name: DRADASH_OIDC_TOKEN_ENDPOINT
  value: {{ required "oidc.tokenEndpoint is required when oidc.enabled" $o.tokenEndpoint | quote }}
- name: DRADASH_OIDC_USER_ENDPOINT
  value: {{ required "oidc.userEndpoint is required when oidc.enabled" $o.userEndpoint | quote }}
- name: DRADASH_OIDC_JWKS_ENDPOINT
  value: {{ required "oidc.jwksEndpoint is required when oidc.enabled" $o.jwksEndpoint | quote }}
- name: DRADASH_OIDC_SIGN_ALGO
  value: {{ $o.signAlgo | quote }}
- name: DRADASH_OIDC_SCOPES
  value: {{ $o.scopes | quote }}
- name: DRADASH_OIDC_USERNAME_CLAIM
  value: {{ $o.usernameClaim | quote }}
- name: DRADASH_OIDC_GROUPS_CLAIM
  value: {{ $o.groupsClaim | quote }}
- name: DRADASH_OIDC_VIEWER_GROUPS
  value: {{ $o.roleGroups.viewer | join "," | quote }}
- name: DRADASH_OIDC_OPERATOR_GROUPS
  value: {{ $o.roleGroups.operator | join "," | quote }}
- name: DRADASH_OIDC_ADMIN_GROUPS
  value: {{ $o.roleGroups.admin | join "," | quote }}
{{- end }}
{{- end }}

{{/* The secret key (and, on the web pods, the OIDC client secret) as files: Kubernetes mounts them, the
service account needs no access to Secrets. /tmp is the only writable directory. */}}
{{- define "dradash.volumeMounts" -}}
- name: secret-key
  mountPath: /etc/dradash/secret-key
  readOnly: true
- name: tmp
  mountPath: /tmp
{{- end }}

{{- define "dradash.volumes" -}}
- name: secret-key
  secret:
    secretName: {{ include "dradash.secretKeySecret" . }}
    # owner root, group fsGroup: readable by the dradash user only
    defaultMode: 0440
    items:
      - key: {{ .Values.secretKey.existingSecretKey }}
        path: {{ .Values.secretKey.existingSecretKey }}
- name: tmp
  emptyDir:
    sizeLimit: 256Mi
{{- end }}

{{/* The restricted Pod Security Standard: non-root, no privilege escalation, no capabilities, a read-only
root filesystem, the runtime's default seccomp profile. The uid is the Containerfile's USER. */}}
{{- define "dradash.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "dradash.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: [ALL]
{{- end }}

{{/* Waits until the database holds every migration of this image (the migrate Job applies them), so no
process starts on an old schema. */}}
{{- define "dradash.waitForMigrations" -}}
- name: wait-for-migrations
  image: {{ include "dradash.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  command:
    - sh
    - -c
    - until python manage.py migrate --check >/dev/null; do echo "waiting for the migrate Job"; sleep 5; done
  env:
    {{- include "dradash.env" . | nindent 4 }}
  volumeMounts:
    {{- include "dradash.volumeMounts" . | nindent 4 }}
  securityContext:
    {{- include "dradash.containerSecurityContext" . | nindent 4 }}
  resources:
    {{- toYaml .Values.migrations.resources | nindent 4 }}
{{- end }}

{{- define "dradash.scheduling" -}}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Spread a component's replicas over nodes when the cluster can; never block scheduling on it. */}}
{{- define "dradash.spread" -}}
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        {{- include "dradash.selectorLabels" . | nindent 8 }}
{{- end }}
