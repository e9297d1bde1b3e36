"""422s for the workload, networking and storage kinds, in kube-apiserver's words: what kubectl users meet
first (a DaemonSet or StatefulSet without a selector, a CronJob's schedule or restart policy, an Ingress
without rules, a claim without access modes)."""

from __future__ import annotations

from typing import Any

import pytest

from simcluster.resources import BY_PLURAL
from tests.simcluster.conftest import Http, Kubectl
from tests.simcluster.samples import collection_path, sample

SELECTORLESS_DAEMON_SET = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: fluentd}
spec:
  template:
    metadata: {labels: {name: fluentd}}
    spec: {containers: [{name: fluentd, image: registry.example.com/fluentd:1.0}]}
"""


def test_it_refuses_a_daemonset_without_a_selector_as_apps_v1_does(kubectl: Kubectl, http: Http) -> None:
    applied = kubectl("apply", "-f", "-", input_text=SELECTORLESS_DAEMON_SET)
    assert applied.returncode == 1
    assert applied.stderr.strip().endswith(
        'The DaemonSet "fluentd" is invalid: spec.template.metadata.labels: Invalid value: '
        'map[string]string{"name":"fluentd"}: `selector` does not match template `labels`'
    )
    body = sample("daemonsets")
    del body["spec"]["selector"]
    status, _, answer = http.request("POST", collection_path(BY_PLURAL["daemonsets"]), body)
    assert (status, answer["reason"], answer["details"]["kind"]) == (422, "Invalid", "DaemonSet")


def _causes(http: Http, plural: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    status, _, answer = http.request("POST", collection_path(BY_PLURAL[plural]), body)
    assert status == 422, answer
    return [(c["field"], c["message"]) for c in answer["details"]["causes"]]


def _edited(plural: str, path: str, value: Any) -> dict[str, Any]:
    """The sample with the field at dotted `path` set to `value` (None removes it)."""
    body = sample(plural)
    *parents, last = path.split(".")
    node = body
    for part in parents:
        node = node.setdefault(part, {})
    if value is None:
        node.pop(last, None)
    else:
        node[last] = value
    return body


@pytest.mark.parametrize(
    ("plural", "path", "value", "cause"),
    [
        ("daemonsets", "spec.selector", {}, ("spec.selector", "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset")),
        ("daemonsets", "spec.template.spec.restartPolicy", "Never", ("spec.template.spec.restartPolicy", 'Unsupported value: "Never": supported values: "Always"')),
        ("daemonsets", "spec.template.spec.containers", [], ("spec.template.spec.containers", "Required value")),
        ("daemonsets", "spec.updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "10%"}}, ("spec.updateStrategy.rollingUpdate.maxSurge", "Invalid value: 10%: may not be set when maxUnavailable is non-zero")),
        ("daemonsets", "spec.updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}, ("spec.updateStrategy.rollingUpdate.maxUnavailable", "Required value: cannot be 0 when maxSurge is 0")),
        ("statefulsets", "spec.selector", None, ("spec.selector", "Required value")),
        ("statefulsets", "spec.persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Keep"}, ("spec.persistentVolumeClaimRetentionPolicy.whenDeleted", 'Unsupported value: "Keep": supported values: "Retain", "Delete"')),
        ("statefulsets", "spec.selector", {"matchLabels": {"app": "other"}}, ("spec.template.metadata.labels", 'Invalid value: map[string]string{"app":"db"}: `selector` does not match template `labels`')),
        ("statefulsets", "metadata.name", "db.primary", ("metadata.name", 'Invalid value: "db.primary": must not contain dots')),
        ("controllerrevisions", "data", None, ("data", "Required value: data is mandatory")),
        ("controllerrevisions", "revision", -1, ("revision", "Invalid value: -1: must be greater than or equal to 0")),
        ("replicationcontrollers", "spec.template", None, ("spec.template", "Required value")),
        ("replicationcontrollers", "spec.selector", {"app": "other"}, ("spec.template.metadata.labels", 'Invalid value: map[string]string{"app":"legacy"}: `selector` does not match template `labels`')),
        ("cronjobs", "spec.schedule", "every day", ("spec.schedule", 'Invalid value: "every day": expected exactly 5 fields, found 2: [every day]')),
        ("cronjobs", "spec.schedule", "0 25 * * *", ("spec.schedule", 'Invalid value: "0 25 * * *": end of range (25) above maximum (23): 25')),
        ("cronjobs", "spec.schedule", "TZ=UTC 0 3 * * *", ("spec.schedule", 'Invalid value: "TZ=UTC 0 3 * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead')),
        ("cronjobs", "spec.schedule", None, ("spec.schedule", "Required value")),
        ("cronjobs", "spec.jobTemplate.spec.template.spec.restartPolicy", None, ("spec.jobTemplate.spec.template.spec.restartPolicy", 'Unsupported value: "Always": supported values: "OnFailure", "Never"')),
        ("cronjobs", "spec.timeZone", "Mars/Olympus", ("spec.timeZone", 'Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus')),
        ("ingresses", "spec.defaultBackend", None, ("spec", "Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified")),
        ("ingresses", "spec.defaultBackend", {"service": {"name": "web"}}, ("spec.defaultBackend", "Required value: port name or number is required")),
        ("ingresses", "spec.rules", [{"host": "10.0.0.1", "http": {"paths": [{"path": "/", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}], ("spec.rules[0].host", 'Invalid value: "10.0.0.1": must be a DNS name, not an IP address')),
        ("persistentvolumeclaims", "spec.accessModes", None, ("spec.accessModes", "Required value: at least 1 access mode is required")),
        ("persistentvolumeclaims", "spec.resources", None, ("spec.resources[storage]", "Required value")),
        ("persistentvolumes", "spec.hostPath", None, ("spec", "Required value: must specify a volume type")),
        ("persistentvolumes", "spec.persistentVolumeReclaimPolicy", "Keep", ("spec.persistentVolumeReclaimPolicy", 'Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"')),
    ],
)  # fmt: skip
def test_it_refuses_what_upstream_refuses_in_its_words(
    http: Http, plural: str, path: str, value: Any, cause: tuple[str, str]
) -> None:
    assert cause in _causes(http, plural, _edited(plural, path, value))


def test_it_refuses_changes_to_a_statefulsets_fixed_fields_and_to_a_claims_spec(http: Http) -> None:
    for plural in ("statefulsets", "persistentvolumeclaims"):
        resource = BY_PLURAL[plural]
        status, _, created = http.request("POST", collection_path(resource), sample(plural))
        assert status == 201, created
        changed = created
        if plural == "statefulsets":
            changed["spec"]["serviceName"] = "other"
            changed["spec"]["replicas"] = 3  # may change: no cause for it
        else:
            changed["spec"]["accessModes"] = ["ReadWriteMany"]
        status, _, answer = http.request(
            "PUT", f"{collection_path(resource)}/{created['metadata']['name']}", changed
        )
        assert (status, [c["field"] for c in answer["details"]["causes"]]) == (422, ["spec"]), answer
