"""Rules of the apps/v1 kinds beyond the schema: Deployment and ReplicaSet specs (upstream's
ValidateDeploymentSpec and ValidateReplicaSetSpec, with the registries' apps/v1 selector immutability).

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
    # ValidatePodTemplateSpec judges the template's labels at `spec.template.labels`, not under metadata.
    for key, value in as_map(labels).items():
        qualified_name(causes, "spec.template.labels", key)
        label_value(causes, "spec.template.labels", value)
    _check_template_spec(causes, as_map(template.get("spec")))


def _check_template_spec(causes: Causes, pod_spec: JSON) -> None:
    """The template's spec as a pod's is judged, its errors moved under `spec.template.spec`."""
    judged = Causes()
    check_pod(judged, {"spec": pod_spec}, None, None)
    for item in judged.items:
        field = item["field"]
        if field == "spec" or field.startswith("spec.") or field.startswith("spec["):
            field = "spec.template." + field
        causes.add(item["reason"], field, item["message"])
    policy = pod_spec.get("restartPolicy", "Always")
    if policy != "Always":
        causes.not_supported("spec.template.spec.restartPolicy", policy, ["Always"])
    if pod_spec.get("activeDeadlineSeconds") is not None:
        causes.forbidden(
            "spec.template.spec.activeDeadlineSeconds", "activeDeadlineSeconds in ReplicaSet is not Supported"
        )


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
    causes.add("FieldValueInvalid", path, f"Invalid value: {shown}: {detail}")


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
