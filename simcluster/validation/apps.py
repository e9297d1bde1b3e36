"""Rules of the workload kinds beyond the schema: Deployment and ReplicaSet specs (upstream's
ValidateDeploymentSpec and ValidateReplicaSetSpec, with the registries' apps/v1 selector immutability),
DaemonSet and StatefulSet specs (ValidateDaemonSetSpec, ValidateStatefulSetSpec and their updates), and the
core group's ReplicationController (ValidateReplicationControllerSpec), whose template is judged alike.

Replicas and minReadySeconds not negative; a selector, not empty, that the pod template's labels match; a
pod template as a pod's spec is judged (its errors under `spec.template.spec`) that restarts Always and has
no activeDeadlineSeconds. The bad values are shown as Go's `%#v` shows them, as kube-apiserver's messages
do: `map[string]string{"app":"web"}`, `v1.LabelSelector{MatchLabels:…, MatchExpressions:…}`.
"""

from __future__ import annotations

import json
from typing import Any

from dra.selection import SelectorError, label_selector
from simcluster.schema import Causes, child
from simcluster.validation.core import check_pod
from simcluster.validation.names import label_value, qualified_name
from simcluster.validation.shared import as_list, as_map

JSON = dict[str, Any]

_IN_OPERATORS = ("In", "NotIn")
_EXISTS_OPERATORS = ("Exists", "DoesNotExist")


def check_deployment(causes: Causes, obj: JSON, old: JSON | None, subresource: str | None) -> list[str]:
    if subresource is None:
        spec = as_map(obj.get("spec"))
        _non_negative(causes, "spec.replicas", spec.get("replicas"))
        _check_selector_and_template(causes, spec)
        _check_strategy(causes, as_map(spec.get("strategy")))
        _non_negative(causes, "spec.minReadySeconds", spec.get("minReadySeconds"))
        _non_negative(causes, "spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))
        deadline = spec.get("progressDeadlineSeconds")
        if isinstance(deadline, int):
            _non_negative(causes, "spec.progressDeadlineSeconds", deadline)
            ready = spec.get("minReadySeconds")
            if deadline <= (ready if isinstance(ready, int) else 0):
                causes.invalid(
                    "spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"
                )
        _immutable_selector(causes, obj, old)
    return []


def check_replica_set(causes: Causes, obj: JSON, old: JSON | None, subresource: str | None) -> list[str]:
    if subresource is None:
        spec = as_map(obj.get("spec"))
        _non_negative(causes, "spec.replicas", spec.get("replicas"))
        _non_negative(causes, "spec.minReadySeconds", spec.get("minReadySeconds"))
        _check_selector_and_template(causes, spec)
        _immutable_selector(causes, obj, old)
    return []


def _check_selector_and_template(causes: Causes, spec: JSON) -> None:
    """The selector and the template, as ValidateReplicaSetSpec and ValidateDeploymentSpec judge them alike
    (their words name a deployment and a ReplicaSet whichever kind it is): a template is judged only
    against a selector that parses."""
    raw = spec.get("selector")
    parses = True
    if raw is None:
        causes.required("spec.selector")
    else:
        before = len(causes)
        _check_label_selector(causes, "spec.selector", as_map(raw))
        parses = len(causes) == before
        if not as_map(raw).get("matchLabels") and not as_list(as_map(raw).get("matchExpressions")):
            _invalid(
                causes, "spec.selector", go_label_selector(raw), "empty selector is invalid for deployment"
            )
    try:
        selector = label_selector(raw) if parses else None
    except SelectorError:
        selector = None
    if selector is None:
        _invalid(causes, "spec.selector", go_label_selector(raw), "invalid label selector")
        return
    template = as_map(spec.get("template"))
    labels = as_map(template.get("metadata")).get("labels")
    # A missing selector selects nothing (every template fails it); an empty one everything (no check).
    if (selector.requirements or not selector.present) and not selector.matches(
        {str(k): str(v) for k, v in as_map(labels).items()}
    ):
        _invalid(causes, "spec.template.metadata.labels", go_string_map(labels),
                 "`selector` does not match template `labels`")  # fmt: skip
    _check_template_labels(causes, labels)
    _check_template_spec(causes, as_map(template.get("spec")))


def check_daemon_set(causes: Causes, obj: JSON, old: JSON | None, subresource: str | None) -> list[str]:
    """ValidateDaemonSetSpec: unlike a Deployment's, a missing selector is no error of its own; it selects
    nothing, so the template's labels do not match it."""
    if subresource is not None:
        return []
    spec = as_map(obj.get("spec"))
    raw = spec.get("selector")
    if raw is not None:
        _check_label_selector(causes, "spec.selector", as_map(raw))
    selector = _parsed_selector(raw)
    template = as_map(spec.get("template"))
    labels = as_map(template.get("metadata")).get("labels")
    if selector is not None and not selector.matches({str(k): str(v) for k, v in as_map(labels).items()}):
        _invalid(causes, "spec.template.metadata.labels", go_string_map(labels),
                 "`selector` does not match template `labels`")  # fmt: skip
    if (
        raw is not None
        and not as_map(raw).get("matchLabels")
        and not as_list(as_map(raw).get("matchExpressions"))
    ):
        _invalid(causes, "spec.selector", go_label_selector(raw), "empty selector is invalid for daemonset")
    _check_template_labels(causes, labels)
    _check_template_spec(causes, as_map(template.get("spec")), "DaemonSet")
    _non_negative(causes, "spec.minReadySeconds", spec.get("minReadySeconds"))
    strategy = as_map(spec.get("updateStrategy"))
    kind = strategy.get("type")
    if kind == "RollingUpdate" and strategy.get("rollingUpdate") is None:
        causes.required("spec.updateStrategy.rollingUpdate")
    elif kind == "RollingUpdate":
        _check_rolling_daemon_set(causes, as_map(strategy.get("rollingUpdate")))
    elif kind not in ("RollingUpdate", "OnDelete"):
        update = "nil" if strategy.get("rollingUpdate") is None else "0xc000000000"
        shown = f"apps.DaemonSetUpdateStrategy{{Type:{_go_quote(kind or '')}, RollingUpdate:(*apps.RollingUpdateDaemonSet)({update})}}"
        causes.add("FieldValueNotSupported", "spec.updateStrategy",
                   f'Unsupported value: {shown}: supported values: "RollingUpdate", "OnDelete"')  # fmt: skip
    _non_negative(causes, "spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))
    _immutable_selector(causes, obj, old)
    return []


#: The StatefulSet spec fields an update may change (ValidateStatefulSetUpdate).
_STATEFUL_SET_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy",
                         "persistentVolumeClaimRetentionPolicy", "minReadySeconds")  # fmt: skip


def check_controller_revision(
    causes: Causes, obj: JSON, old: JSON | None, subresource: str | None
) -> list[str]:
    """ValidateControllerRevision: data is mandatory, revision not negative."""
    if obj.get("data") is None:
        causes.required("data", "data is mandatory")
    _non_negative(causes, "revision", obj.get("revision"))
    return []


def check_stateful_set(causes: Causes, obj: JSON, old: JSON | None, subresource: str | None) -> list[str]:
    """ValidateStatefulSetSpec: the template's labels and annotations, not its pod spec (upstream leaves that
    to the pods the controller creates); on update, only `_STATEFUL_SET_MUTABLE` may change."""
    if subresource is not None:
        return []
    spec = as_map(obj.get("spec"))
    policy = spec.get("podManagementPolicy")
    if not policy:
        causes.required("spec.podManagementPolicy")
    elif policy not in ("OrderedReady", "Parallel"):
        causes.invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'")
    strategy = as_map(spec.get("updateStrategy"))
    kind = strategy.get("type")
    if not kind:
        causes.required("spec.updateStrategy")
    elif kind == "OnDelete" and strategy.get("rollingUpdate") is not None:
        rolling = as_map(strategy.get("rollingUpdate"))
        partition = rolling.get("partition") if isinstance(rolling.get("partition"), int) else 0
        unavailable = "nil" if rolling.get("maxUnavailable") is None else "0xc000000000"
        shown = f"apps.RollingUpdateStatefulSetStrategy{{Partition:{partition}, MaxUnavailable:(*intstr.IntOrString)({unavailable})}}"
        _invalid(
            causes,
            "spec.updateStrategy.rollingUpdate",
            shown,
            "only allowed for updateStrategy 'RollingUpdate'",
        )
    elif kind == "RollingUpdate":
        _non_negative(causes, "spec.updateStrategy.rollingUpdate.partition",
                      as_map(strategy.get("rollingUpdate")).get("partition"))  # fmt: skip
    elif kind != "OnDelete":
        update = "nil" if strategy.get("rollingUpdate") is None else "0xc000000000"
        shown = f"apps.StatefulSetUpdateStrategy{{Type:{_go_quote(kind)}, RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)({update})}}"
        _invalid(causes, "spec.updateStrategy", shown, "must be 'RollingUpdate' or 'OnDelete'")
    retention = as_map(spec.get("persistentVolumeClaimRetentionPolicy"))
    for when in ("whenDeleted", "whenScaled"):
        value = retention.get(when)
        if value is not None and value not in ("Retain", "Delete"):
            causes.not_supported(
                f"spec.persistentVolumeClaimRetentionPolicy.{when}", value, ["Retain", "Delete"]
            )
    _non_negative(causes, "spec.replicas", spec.get("replicas"))
    _non_negative(causes, "spec.minReadySeconds", spec.get("minReadySeconds"))
    raw = spec.get("selector")
    if raw is None:
        causes.required("spec.selector")
    else:
        _check_label_selector(causes, "spec.selector", as_map(raw))
        if not as_map(raw).get("matchLabels") and not as_list(as_map(raw).get("matchExpressions")):
            _invalid(
                causes, "spec.selector", go_label_selector(raw), "empty selector is invalid for statefulset"
            )
    selector = _parsed_selector(raw)
    template = as_map(spec.get("template"))
    labels = as_map(template.get("metadata")).get("labels")
    if selector is None:
        _invalid(causes, "spec.selector", go_label_selector(raw), "")
    elif (selector.requirements or not selector.present) and not selector.matches(
        {str(k): str(v) for k, v in as_map(labels).items()}
    ):
        _invalid(causes, "spec.template.metadata.labels", go_string_map(labels),
                 "`selector` does not match template `labels`")  # fmt: skip
    if selector is not None:
        _check_template_labels(causes, labels)
    pod_spec = as_map(template.get("spec"))
    _check_restart_policy(causes, pod_spec, "StatefulSet")
    if old is not None:
        before = as_map(old.get("spec"))
        if {k: v for k, v in spec.items() if k not in _STATEFUL_SET_MUTABLE} != {
            k: v for k, v in before.items() if k not in _STATEFUL_SET_MUTABLE
        }:
            causes.forbidden(
                "spec",
                "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            )
    return []


def check_replication_controller(
    causes: Causes, obj: JSON, old: JSON | None, subresource: str | None
) -> list[str]:
    """ValidateReplicationControllerSpec: a selector (a plain map, defaulted from the template's labels) that
    is not empty and that the template's labels match; the template judged as a ReplicaSet's."""
    if subresource is not None:
        return []
    spec = as_map(obj.get("spec"))
    _non_negative(causes, "spec.minReadySeconds", spec.get("minReadySeconds"))
    selector = {str(k): str(v) for k, v in as_map(spec.get("selector")).items()}
    if not selector:
        causes.required("spec.selector")
    template = spec.get("template")
    if not isinstance(template, dict):
        causes.required("spec.template")
    else:
        labels = as_map(template.get("metadata")).get("labels")
        given = {str(k): str(v) for k, v in as_map(labels).items()}
        if selector and any(given.get(k) != v for k, v in selector.items()):
            _invalid(causes, "spec.template.metadata.labels", go_string_map(labels),
                     "`selector` does not match template `labels`")  # fmt: skip
        _check_template_labels(causes, labels)
        _check_template_spec(causes, as_map(template.get("spec")), "ReplicationController")
    _non_negative(causes, "spec.replicas", spec.get("replicas"))
    return []


def _int_or_percent(value: Any) -> int:
    """getIntOrPercentValue: a percentage's number, an integer, 0 for anything else."""
    if isinstance(value, str):
        return int(value[:-1]) if value.endswith("%") and value[:-1].isdigit() else 0
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _check_rolling_daemon_set(causes: Causes, rolling: JSON) -> None:
    """ValidateRollingUpdateDaemonSet: exactly one of maxUnavailable and maxSurge is not zero (each an
    integer or a percentage, as the schema checks)."""
    path = "spec.updateStrategy.rollingUpdate"
    for field in ("maxUnavailable", "maxSurge"):
        value = rolling.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            causes.invalid(f"{path}.{field}", value, "must be greater than or equal to 0")
        elif _int_or_percent(value) > 100 and isinstance(value, str):
            _invalid(causes, f"{path}.{field}", value, "must not be greater than 100%")
    unavailable = _int_or_percent(rolling.get("maxUnavailable")) != 0
    surge = _int_or_percent(rolling.get("maxSurge")) != 0
    if unavailable and surge:
        _invalid(
            causes,
            f"{path}.maxSurge",
            str(rolling.get("maxSurge")),
            "may not be set when maxUnavailable is non-zero",
        )
    elif not unavailable and not surge:
        causes.required(f"{path}.maxUnavailable", "cannot be 0 when maxSurge is 0")


def _parsed_selector(raw: Any) -> Any:
    """metav1.LabelSelectorAsSelector: None where it fails; a missing selector selects nothing."""
    try:
        return label_selector(raw)
    except SelectorError:
        return None


def _check_template_labels(causes: Causes, labels: Any) -> None:
    """ValidatePodTemplateSpec judges the template's labels at `spec.template.labels`, not under metadata."""
    for key, value in as_map(labels).items():
        qualified_name(causes, "spec.template.labels", key)
        label_value(causes, "spec.template.labels", value)


def _check_restart_policy(causes: Causes, pod_spec: JSON, kind: str) -> None:
    policy = pod_spec.get("restartPolicy", "Always")
    if policy != "Always":
        causes.not_supported("spec.template.spec.restartPolicy", policy, ["Always"])
    if pod_spec.get("activeDeadlineSeconds") is not None:
        causes.forbidden(
            "spec.template.spec.activeDeadlineSeconds", f"activeDeadlineSeconds in {kind} is not Supported"
        )


def _check_template_spec(causes: Causes, pod_spec: JSON, kind: str = "ReplicaSet") -> None:
    """The template's spec as a pod's is judged, its errors moved under `spec.template.spec`; a workload's
    pods restart Always."""
    _check_pod_spec(causes, pod_spec, "spec.template")
    _check_restart_policy(causes, pod_spec, kind)


def _check_pod_spec(causes: Causes, pod_spec: JSON, path: str) -> None:
    judged = Causes()
    check_pod(judged, {"spec": pod_spec}, None, None)
    for item in judged.items:
        field = item["field"]
        if field == "spec" or field.startswith("spec.") or field.startswith("spec["):
            field = f"{path}.{field}"
        causes.add(item["reason"], field, item["message"])


def check_pod_template(causes: Causes, template: JSON, path: str) -> None:
    """ValidatePodTemplateSpec at `path` (a CronJob's job template): its labels and its spec as a pod's."""
    for key, value in as_map(as_map(template.get("metadata")).get("labels")).items():
        qualified_name(causes, f"{path}.labels", key)
        label_value(causes, f"{path}.labels", value)
    _check_pod_spec(causes, as_map(template.get("spec")), path)


def _check_label_selector(causes: Causes, path: str, selector: JSON) -> None:
    """metav1 ValidateLabelSelector (label values checked strictly, as apps/v1 does)."""
    for key, value in as_map(selector.get("matchLabels")).items():
        qualified_name(causes, child(path, "matchLabels"), key)
        label_value(causes, child(path, "matchLabels"), value)
    for index, raw in enumerate(as_list(selector.get("matchExpressions"))):
        entry = f"{path}.matchExpressions[{index}]"
        requirement = as_map(raw)
        operator = requirement.get("operator")
        values = as_list(requirement.get("values"))
        if operator in _IN_OPERATORS:
            if not values:
                causes.required(
                    child(entry, "values"), "must be specified when `operator` is 'In' or 'NotIn'"
                )
        elif operator in _EXISTS_OPERATORS:
            if values:
                causes.forbidden(
                    child(entry, "values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
        else:
            causes.invalid(child(entry, "operator"), operator, "not a valid selector operator")
        qualified_name(causes, child(entry, "key"), requirement.get("key"))
        for value_index, value in enumerate(values):
            label_value(causes, f"{entry}.values[{value_index}]", value)


def _check_strategy(causes: Causes, strategy: JSON) -> None:
    kind = strategy.get("type", "RollingUpdate")
    if kind == "Recreate":
        if strategy.get("rollingUpdate") is not None:
            causes.forbidden(
                "spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"
            )
    elif kind != "RollingUpdate":
        # The strategy struct as `%#v` prints it; a given rollingUpdate would show its pointer's address.
        update = "nil" if strategy.get("rollingUpdate") is None else "0xc000000000"
        shown = f"apps.DeploymentStrategy{{Type:{_go_quote(kind)}, RollingUpdate:(*apps.RollingUpdateDeployment)({update})}}"
        causes.add("FieldValueNotSupported", "spec.strategy",
                   f'Unsupported value: {shown}: supported values: "Recreate", "RollingUpdate"')  # fmt: skip


def _immutable_selector(causes: Causes, obj: JSON, old: JSON | None) -> None:
    """apps/v1 refuses a changed selector (the registries' ValidateUpdate)."""
    if old is None:
        return
    new_selector = as_map(obj.get("spec")).get("selector")
    if new_selector != as_map(old.get("spec")).get("selector"):
        _invalid(causes, "spec.selector", go_label_selector(new_selector), "field is immutable")


def _non_negative(causes: Causes, path: str, value: Any) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        causes.invalid(path, value, "must be greater than or equal to 0")


def _invalid(causes: Causes, path: str, shown: str, detail: str) -> None:
    """field.Invalid with a value shown as Go's `%#v` shows it; an empty detail adds nothing."""
    causes.add("FieldValueInvalid", path, f"Invalid value: {shown}" + (f": {detail}" if detail else ""))


def _go_quote(text: Any) -> str:
    return json.dumps(str(text), ensure_ascii=False)


def go_string_map(value: Any) -> str:
    """A map[string]string as `%#v` prints it: keys in order, `"k":"v"` pairs; nil as `(nil)`."""
    if not isinstance(value, dict):
        return "map[string]string(nil)"
    pairs = ", ".join(f"{_go_quote(k)}:{_go_quote(v)}" for k, v in sorted(value.items()))
    return f"map[string]string{{{pairs}}}"


def _go_strings(values: Any) -> str:
    if not isinstance(values, list):
        return "[]string(nil)"
    return "[]string{" + ", ".join(_go_quote(v) for v in values) + "}"


def go_label_selector(selector: Any) -> str:
    """A *metav1.LabelSelector as field errors print it (`%#v` of the value it points to); nil as null."""
    if not isinstance(selector, dict):
        return "null"
    expressions = selector.get("matchExpressions")
    if isinstance(expressions, list):
        shown = ", ".join(
            f"v1.LabelSelectorRequirement{{Key:{_go_quote(as_map(e).get('key', ''))}, "
            f"Operator:{_go_quote(as_map(e).get('operator', ''))}, Values:{_go_strings(as_map(e).get('values'))}}}"
            for e in expressions
        )
        requirements = f"[]v1.LabelSelectorRequirement{{{shown}}}"
    else:
        requirements = "[]v1.LabelSelectorRequirement(nil)"
    return (
        f"v1.LabelSelector{{MatchLabels:{go_string_map(selector.get('matchLabels'))}, "
        f"MatchExpressions:{requirements}}}"
    )
