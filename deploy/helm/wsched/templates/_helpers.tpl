{{/* Names and labels shared by every object. */}}
{{- define "wsched.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "wsched.secretName" -}}
{{- default (include "wsched.fullname" .) .Values.secret.name -}}
{{- end -}}

{{- define "wsched.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "wsched.labels" -}}
app.kubernetes.io/name: wsched
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: wsched
{{- end -}}

{{/* Selector labels of the server pods (immutable in a Deployment). */}}
{{- define "wsched.serverSelector" -}}
app.kubernetes.io/name: wsched
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end -}}

{{/* Selector labels of all agent pods; each DaemonSet adds its pool. */}}
{{- define "wsched.agentSelector" -}}
app.kubernetes.io/name: wsched
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: agent
{{- end -}}

{{/* Security context of every container: nothing but reading. */}}
{{- define "wsched.containerSecurity" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- end -}}

{{/* The image's user (deploy/container/Dockerfile: USER 10001:10001). */}}
{{- define "wsched.podSecurity" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end -}}
