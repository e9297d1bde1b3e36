"""Request bodies in Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`), read into JSON.

kubectl's typed clients send protobuf for the built-in kinds they create themselves: the access and rules
reviews of `kubectl auth can-i`, the SelfSubjectReview of `auth whoami`, the TokenRequest of `create
token`, the Eviction and DeleteOptions of `drain`, and the objects of `kubectl create namespace |
serviceaccount | role | clusterrole | rolebinding | clusterrolebinding | deployment | job | cronjob | ingress |
service | secret | configmap | poddisruptionbudget`, and the Pod of `kubectl debug node/<name>`. Those messages are described here by their field numbers (from k8s.io/api's
generated.proto); the envelope is the `k8s\\0` magic followed by a runtime.Unknown. Answers are always
JSON, which every client accepts. Other kinds answer 415 as before.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"

# A field: (json name, type, repeated). Types: "string", "int", "bool" (Go value fields: a zero value is
# dropped, as JSON's omitempty would), "int?", "bool?" (Go pointers: zero is a value), "time", "intstr",
# "map" (string -> string), "bytesmap" (string -> bytes, base64 in JSON), "qmap" (string -> Quantity),
# "extra" (string -> ExtraValue), or the name of a message below.
Field = tuple[str, str, bool]
_S: Field = ("", "string", False)


def _f(name: str, kind: str = "string", repeated: bool = False) -> Field:
    return (name, kind, repeated)


MESSAGES: dict[str, dict[int, Field]] = {
    "ObjectMeta": {1: _f("name"), 2: _f("generateName"), 3: _f("namespace"), 4: _f("selfLink"), 5: _f("uid"),
                   6: _f("resourceVersion"), 7: _f("generation", "int"), 8: _f("creationTimestamp", "time"),
                   9: _f("deletionTimestamp", "time"), 10: _f("deletionGracePeriodSeconds", "int?"),
                   11: _f("labels", "map"), 12: _f("annotations", "map"),
                   13: _f("ownerReferences", "OwnerReference", True), 14: _f("finalizers", "string", True)},
    "OwnerReference": {1: _f("kind"), 3: _f("name"), 4: _f("uid"), 5: _f("apiVersion"), 6: _f("controller", "bool?"),
                       7: _f("blockOwnerDeletion", "bool?")},
    "DeleteOptions": {1: _f("gracePeriodSeconds", "int?"), 2: _f("preconditions", "Preconditions"),
                      3: _f("orphanDependents", "bool?"), 4: _f("propagationPolicy"), 5: _f("dryRun", "string", True)},
    "Preconditions": {1: _f("uid"), 2: _f("resourceVersion")},
    "Eviction": {1: _f("metadata", "ObjectMeta"), 2: _f("deleteOptions", "DeleteOptions")},
    "ResourceAttributes": {1: _f("namespace"), 2: _f("verb"), 3: _f("group"), 4: _f("version"), 5: _f("resource"),
                           6: _f("subresource"), 7: _f("name")},
    "NonResourceAttributes": {1: _f("path"), 2: _f("verb")},
    "SelfSubjectAccessReviewSpec": {1: _f("resourceAttributes", "ResourceAttributes"),
                                    2: _f("nonResourceAttributes", "NonResourceAttributes")},
    "SubjectAccessReviewSpec": {1: _f("resourceAttributes", "ResourceAttributes"),
                                2: _f("nonResourceAttributes", "NonResourceAttributes"), 3: _f("user"),
                                4: _f("groups", "string", True), 5: _f("extra", "extra"), 6: _f("uid")},
    "SelfSubjectAccessReview": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "SelfSubjectAccessReviewSpec")},
    "SubjectAccessReview": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "SubjectAccessReviewSpec")},
    "SelfSubjectRulesReviewSpec": {1: _f("namespace")},
    "SelfSubjectRulesReview": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "SelfSubjectRulesReviewSpec")},
    "SelfSubjectReview": {1: _f("metadata", "ObjectMeta")},
    "TokenReviewSpec": {1: _f("token"), 2: _f("audiences", "string", True)},
    "TokenReview": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "TokenReviewSpec")},
    "BoundObjectReference": {1: _f("kind"), 2: _f("apiVersion"), 3: _f("name"), 4: _f("uid")},
    "TokenRequestSpec": {1: _f("audiences", "string", True), 3: _f("boundObjectRef", "BoundObjectReference"),
                         4: _f("expirationSeconds", "int?")},
    "TokenRequest": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "TokenRequestSpec")},
    "NamespaceSpec": {1: _f("finalizers", "string", True)},
    "Namespace": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "NamespaceSpec")},
    "ObjectReference": {1: _f("kind"), 2: _f("namespace"), 3: _f("name"), 4: _f("uid"), 5: _f("apiVersion"),
                        6: _f("resourceVersion"), 7: _f("fieldPath")},
    "LocalObjectReference": {1: _f("name")},
    "ServiceAccount": {1: _f("metadata", "ObjectMeta"), 2: _f("secrets", "ObjectReference", True),
                       3: _f("imagePullSecrets", "LocalObjectReference", True),
                       4: _f("automountServiceAccountToken", "bool?")},
    "PolicyRule": {1: _f("verbs", "string", True), 2: _f("apiGroups", "string", True),
                   3: _f("resources", "string", True), 4: _f("resourceNames", "string", True),
                   5: _f("nonResourceURLs", "string", True)},
    "LabelSelectorRequirement": {1: _f("key"), 2: _f("operator"), 3: _f("values", "string", True)},
    "LabelSelector": {1: _f("matchLabels", "map"), 2: _f("matchExpressions", "LabelSelectorRequirement", True)},
    "AggregationRule": {1: _f("clusterRoleSelectors", "LabelSelector", True)},
    "Role": {1: _f("metadata", "ObjectMeta"), 2: _f("rules", "PolicyRule", True)},
    "ClusterRole": {1: _f("metadata", "ObjectMeta"), 2: _f("rules", "PolicyRule", True),
                    3: _f("aggregationRule", "AggregationRule")},
    "Subject": {1: _f("kind"), 2: _f("apiGroup"), 3: _f("name"), 4: _f("namespace")},
    "RoleRef": {1: _f("apiGroup"), 2: _f("kind"), 3: _f("name")},
    "RoleBinding": {1: _f("metadata", "ObjectMeta"), 2: _f("subjects", "Subject", True), 3: _f("roleRef", "RoleRef")},
    "ClusterRoleBinding": {1: _f("metadata", "ObjectMeta"), 2: _f("subjects", "Subject", True),
                           3: _f("roleRef", "RoleRef")},
    # kubectl create deployment | job | service | secret | configmap | poddisruptionbudget: the fields they set
    "Deployment": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "DeploymentSpec")},
    "DeploymentSpec": {1: _f("replicas", "int?"), 2: _f("selector", "LabelSelector"), 3: _f("template", "PodTemplateSpec"),
                       4: _f("strategy", "DeploymentStrategy"), 5: _f("minReadySeconds", "int"),
                       6: _f("revisionHistoryLimit", "int?"), 7: _f("paused", "bool"),
                       9: _f("progressDeadlineSeconds", "int?")},
    "DeploymentStrategy": {1: _f("type"), 2: _f("rollingUpdate", "RollingUpdateDeployment")},
    "RollingUpdateDeployment": {1: _f("maxUnavailable", "intstr"), 2: _f("maxSurge", "intstr")},
    "PodTemplateSpec": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "PodSpec")},
    # kubectl debug node/<name> (and --copy-to) creates a Pod: its spec as far as a debugging pod uses it
    "Pod": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "PodSpec")},
    "PodSpec": {1: _f("volumes", "Volume", True), 2: _f("containers", "Container", True), 3: _f("restartPolicy"),
                4: _f("terminationGracePeriodSeconds", "int?"), 5: _f("activeDeadlineSeconds", "int?"),
                6: _f("dnsPolicy"), 7: _f("nodeSelector", "map"), 8: _f("serviceAccountName"),
                10: _f("nodeName"), 11: _f("hostNetwork", "bool"), 12: _f("hostPID", "bool"),
                13: _f("hostIPC", "bool"), 14: _f("securityContext", "PodSecurityContext"),
                15: _f("imagePullSecrets", "LocalObjectReference", True), 16: _f("hostname"), 17: _f("subdomain"),
                19: _f("schedulerName"), 20: _f("initContainers", "Container", True),
                21: _f("automountServiceAccountToken", "bool?"), 22: _f("tolerations", "Toleration", True),
                24: _f("priorityClassName"), 25: _f("priority", "int?"), 27: _f("shareProcessNamespace", "bool?"),
                30: _f("enableServiceLinks", "bool?"), 31: _f("preemptionPolicy"),
                38: _f("schedulingGates", "PodSchedulingGate", True),
                39: _f("resourceClaims", "PodResourceClaim", True)},
    "Container": {1: _f("name"), 2: _f("image"), 3: _f("command", "string", True), 4: _f("args", "string", True),
                  5: _f("workingDir"), 6: _f("ports", "ContainerPort", True), 7: _f("env", "EnvVar", True),
                  8: _f("resources", "ResourceRequirements"), 9: _f("volumeMounts", "VolumeMount", True),
                  13: _f("terminationMessagePath"), 14: _f("imagePullPolicy"),
                  15: _f("securityContext", "SecurityContext"), 16: _f("stdin", "bool"), 17: _f("stdinOnce", "bool"),
                  18: _f("tty", "bool"), 20: _f("terminationMessagePolicy"), 24: _f("restartPolicy")},
    "ContainerPort": {1: _f("name"), 2: _f("hostPort", "int"), 3: _f("containerPort", "int"), 4: _f("protocol"),
                      5: _f("hostIP")},
    "EnvVar": {1: _f("name"), 2: _f("value"), 3: _f("valueFrom", "EnvVarSource")},
    "EnvVarSource": {1: _f("fieldRef", "ObjectFieldSelector")},
    "ObjectFieldSelector": {1: _f("apiVersion"), 2: _f("fieldPath")},
    "ResourceRequirements": {1: _f("limits", "qmap"), 2: _f("requests", "qmap"), 3: _f("claims", "ResourceClaim", True)},
    "ResourceClaim": {1: _f("name"), 2: _f("request")},
    "PodResourceClaim": {1: _f("name"), 3: _f("resourceClaimName"), 4: _f("resourceClaimTemplateName")},
    "PodSchedulingGate": {1: _f("name")},
    # a Volume's source is inline in its JSON (no "volumeSource" key), as are a ConfigMap source's name
    "Volume": {1: _f("name"), 2: _f("", "VolumeSource")},
    "VolumeSource": {1: _f("hostPath", "HostPathVolumeSource"), 2: _f("emptyDir", "EmptyDirVolumeSource"),
                     6: _f("secret", "SecretVolumeSource"), 19: _f("configMap", "ConfigMapVolumeSource")},
    "HostPathVolumeSource": {1: _f("path"), 2: _f("type")},
    "EmptyDirVolumeSource": {1: _f("medium")},
    "SecretVolumeSource": {1: _f("secretName"), 3: _f("defaultMode", "int?"), 4: _f("optional", "bool?")},
    "ConfigMapVolumeSource": {1: _f("", "LocalObjectReference"), 3: _f("defaultMode", "int?"),
                              4: _f("optional", "bool?")},
    "VolumeMount": {1: _f("name"), 2: _f("readOnly", "bool"), 3: _f("mountPath"), 4: _f("subPath"),
                    5: _f("mountPropagation"), 6: _f("subPathExpr"), 7: _f("recursiveReadOnly")},
    "Toleration": {1: _f("key"), 2: _f("operator"), 3: _f("value"), 4: _f("effect"), 5: _f("tolerationSeconds", "int?")},
    "Capabilities": {1: _f("add", "string", True), 2: _f("drop", "string", True)},
    "SecurityContext": {1: _f("capabilities", "Capabilities"), 2: _f("privileged", "bool?"), 4: _f("runAsUser", "int?"),
                        5: _f("runAsNonRoot", "bool?"), 6: _f("readOnlyRootFilesystem", "bool?"),
                        7: _f("allowPrivilegeEscalation", "bool?"), 8: _f("runAsGroup", "int?"), 9: _f("procMount")},
    "PodSecurityContext": {2: _f("runAsUser", "int?"), 3: _f("runAsNonRoot", "bool?"),
                           4: _f("supplementalGroups", "int?", True), 5: _f("fsGroup", "int?"),
                           6: _f("runAsGroup", "int?")},
    "Secret": {1: _f("metadata", "ObjectMeta"), 2: _f("data", "bytesmap"), 3: _f("type"), 4: _f("stringData", "map"),
               5: _f("immutable", "bool?")},
    "ConfigMap": {1: _f("metadata", "ObjectMeta"), 2: _f("data", "map"), 3: _f("binaryData", "bytesmap"),
                  4: _f("immutable", "bool?")},
    "Service": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "ServiceSpec")},
    "ServiceSpec": {1: _f("ports", "ServicePort", True), 2: _f("selector", "map"), 3: _f("clusterIP"), 4: _f("type"),
                    5: _f("externalIPs", "string", True), 7: _f("sessionAffinity"), 10: _f("externalName")},
    "ServicePort": {1: _f("name"), 2: _f("protocol"), 3: _f("port", "int"), 4: _f("targetPort", "intstr"),
                    5: _f("nodePort", "int"), 6: _f("appProtocol")},
    "Job": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "JobSpec")},
    "JobSpec": {1: _f("parallelism", "int?"), 2: _f("completions", "int?"), 3: _f("activeDeadlineSeconds", "int?"),
                4: _f("selector", "LabelSelector"), 5: _f("manualSelector", "bool?"), 6: _f("template", "PodTemplateSpec"),
                7: _f("backoffLimit", "int?"), 8: _f("ttlSecondsAfterFinished", "int?"), 9: _f("completionMode"),
                10: _f("suspend", "bool?"), 12: _f("backoffLimitPerIndex", "int?"), 13: _f("maxFailedIndexes", "int?"),
                14: _f("podReplacementPolicy"), 15: _f("managedBy")},
    # kubectl create cronjob | ingress
    "CronJob": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "CronJobSpec")},
    "CronJobSpec": {1: _f("schedule"), 2: _f("startingDeadlineSeconds", "int?"), 3: _f("concurrencyPolicy"),
                    4: _f("suspend", "bool?"), 5: _f("jobTemplate", "JobTemplateSpec"),
                    6: _f("successfulJobsHistoryLimit", "int?"), 7: _f("failedJobsHistoryLimit", "int?"),
                    8: _f("timeZone")},
    "JobTemplateSpec": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "JobSpec")},
    "Ingress": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "IngressSpec")},
    "IngressSpec": {1: _f("defaultBackend", "IngressBackend"), 2: _f("tls", "IngressTLS", True),
                    3: _f("rules", "IngressRule", True), 4: _f("ingressClassName")},
    "IngressBackend": {3: _f("resource", "TypedLocalObjectReference"), 4: _f("service", "IngressServiceBackend")},
    "TypedLocalObjectReference": {1: _f("apiGroup"), 2: _f("kind"), 3: _f("name")},
    "IngressServiceBackend": {1: _f("name"), 2: _f("port", "ServiceBackendPort")},
    "ServiceBackendPort": {1: _f("name"), 2: _f("number", "int")},
    "IngressTLS": {1: _f("hosts", "string", True), 2: _f("secretName")},
    # a rule's value is inline in its JSON (no "ingressRuleValue" key)
    "IngressRule": {1: _f("host"), 2: _f("", "IngressRuleValue")},
    "IngressRuleValue": {1: _f("http", "HTTPIngressRuleValue")},
    "HTTPIngressRuleValue": {1: _f("paths", "HTTPIngressPath", True)},
    "HTTPIngressPath": {1: _f("path"), 2: _f("backend", "IngressBackend"), 3: _f("pathType")},
    "PodDisruptionBudget": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "PodDisruptionBudgetSpec")},
    "PodDisruptionBudgetSpec": {1: _f("minAvailable", "intstr"), 2: _f("selector", "LabelSelector"),
                                3: _f("maxUnavailable", "intstr"), 4: _f("unhealthyPodEvictionPolicy")},
}  # fmt: skip

#: The top-level kinds a request body may carry.
KINDS = frozenset({
    "DeleteOptions", "Eviction", "SelfSubjectAccessReview", "SubjectAccessReview", "LocalSubjectAccessReview",
    "SelfSubjectRulesReview", "SelfSubjectReview", "TokenReview", "TokenRequest", "Namespace", "ServiceAccount",
    "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "Deployment", "Secret", "ConfigMap",
    "PodDisruptionBudget", "Job", "Service", "Pod", "CronJob", "Ingress",
})  # fmt: skip
_ALIASES = {"LocalSubjectAccessReview": "SubjectAccessReview"}


_GO_ZERO_TIME = -62135596800


class ProtobufError(ValueError):
    pass


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 70:
            raise ProtobufError("varint too long")


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value: int for varints, bytes for length-delimited)."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ProtobufError("truncated field")
            value, pos = data[pos : pos + length], pos + length
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == 5:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _scalar(kind: str, wire: int, value: Any, *, repeated: bool = False) -> Any:
    """The JSON value of one field; None for a Go zero value JSON would omit (never inside a list)."""
    if kind == "string":
        if wire != 2:
            raise ProtobufError("a string field is not length-delimited")
        text = bytes(value).decode("utf-8")
        return text if text or repeated else None
    if kind in ("int", "int?"):
        number = _signed(int(value))
        return None if kind == "int" and number == 0 else number
    if kind in ("bool", "bool?"):
        flag = bool(value)
        return None if kind == "bool" and not flag else flag
    if kind == "intstr":
        parts = {n: v for n, _, v in _fields(value)}
        if parts.get(1, 0) == 1:
            return bytes(parts.get(3, b"")).decode("utf-8")
        return _signed(int(parts.get(2, 0)))
    if kind == "time":
        if not value:
            return None  # metav1.Time marshals its zero value as an empty message (JSON null)
        seconds = _signed(int(dict((n, v) for n, _, v in _fields(value)).get(1, 0)))
        if seconds <= _GO_ZERO_TIME:
            return None  # Go's zero time: the field was not set (JSON null)
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return decode_message(kind, value)


def decode_message(name: str, data: bytes) -> dict[str, Any]:
    schema = MESSAGES[name]
    out: dict[str, Any] = {}
    for number, wire, value in _fields(data):
        field = schema.get(number)
        if field is None:
            continue  # a field this reader does not know: skipped, as kube drops unknown fields
        key, kind, repeated = field
        if kind in ("map", "extra", "bytesmap", "qmap"):
            entry = {n: v for n, _, v in _fields(value)}
            map_key = bytes(entry.get(1, b"")).decode("utf-8")
            raw = bytes(entry.get(2, b""))
            if kind == "map":
                out.setdefault(key, {})[map_key] = raw.decode("utf-8")
            elif kind == "bytesmap":
                out.setdefault(key, {})[map_key] = base64.b64encode(raw).decode()
            elif kind == "qmap":  # a Quantity is a message holding its string
                quantity = {n: v for n, _, v in _fields(raw)}
                out.setdefault(key, {})[map_key] = bytes(quantity.get(1, b"")).decode("utf-8")
            else:
                items = [bytes(v).decode("utf-8") for n, _, v in _fields(entry.get(2, b"")) if n == 1]
                out.setdefault(key, {})[map_key] = items
            continue
        if kind in ("int", "int?") and repeated and wire == 2:  # a packed list of varints
            packed, pos = bytes(value), 0
            while pos < len(packed):
                item, pos = _varint(packed, pos)
                out.setdefault(key, []).append(_signed(item))
            continue
        decoded = _scalar(kind, wire, value, repeated=repeated)
        if decoded is None:
            continue
        if not key:  # an inline member (a Volume's source): its fields are the parent's
            out.update(decoded)
            continue
        if repeated:
            out.setdefault(key, []).append(decoded)
        else:
            out[key] = decoded
    return out


def decode(body: bytes) -> dict[str, Any]:
    """A protobuf request body as the JSON object it stands for; ProtobufError for what cannot be read."""
    if not body.startswith(MAGIC):
        raise ProtobufError("missing the k8s protobuf prefix")
    envelope = {n: v for n, _, v in _fields(body[len(MAGIC) :])}
    type_meta = {n: bytes(v).decode("utf-8") for n, _, v in _fields(envelope.get(1, b""))}
    api_version, kind = type_meta.get(1, ""), type_meta.get(2, "")
    if kind not in KINDS:
        raise ProtobufError(f"protobuf bodies of kind {kind or '(none)'} are not supported")
    obj = decode_message(_ALIASES.get(kind, kind), bytes(envelope.get(2, b"")))
    return {"kind": kind, "apiVersion": api_version, **obj}
