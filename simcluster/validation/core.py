"""Rules of the core/v1 and policy/v1 kinds simcluster serves beyond the schema: Pod (resource claims,
containers, tolerations, what an update may change), Node taints, Namespace finalizers, PodDisruptionBudget."""

from __future__ import annotations

from typing import Any, Final

from simcluster.schema import Causes, child
from simcluster.validation.names import dns_label, dns_subdomain, label_value, qualified_name
from simcluster.validation.shared import as_list, as_map, check_node_selector, hashable

#: Finalizer names that need no domain (core/v1 helper.IsStandardFinalizerName).
_STANDARD_FINALIZERS: Final = frozenset({"kubernetes", "orphan", "foregroundDeletion"})

# Pod spec fields an update may change (kube's ValidatePodUpdate, simplified).
_POD_MUTABLE: Final = {
    "activeDeadlineSeconds",
    "tolerations",
    "schedulingGates",
    "terminationGracePeriodSeconds",
}


def check_pod(
    causes: Causes, obj: dict[str, Any], old: dict[str, Any] | None, subresource: str | None
) -> list[str]:
    spec = as_map(obj.get("spec"))
    containers = spec.get("containers")
    if not containers:
        causes.required("spec.containers")
    claims = as_list(spec.get("resourceClaims"))
    claim_names: set[str] = set()
    for index, claim in enumerate(claims):
        entry = f"spec.resourceClaims[{index}]"
        name = as_map(claim).get("name")
        dns_label(causes, child(entry, "name"), name)
        if isinstance(name, str) and name:
            if name in claim_names:
                causes.duplicate(child(entry, "name"), name)
            claim_names.add(name)
        sources = [f for f in ("resourceClaimName", "resourceClaimTemplateName") if as_map(claim).get(f)]
        if not sources:
            causes.invalid(
                entry, "object", "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
            )
        elif len(sources) > 1:
            causes.invalid(
                entry,
                "object",
                "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
            )
        for source in sources:
            dns_subdomain(causes, child(entry, source), as_map(claim)[source])

    node_affinity = as_map(as_map(spec.get("affinity")).get("nodeAffinity"))
    required_terms = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required_terms, dict):
        check_node_selector(
            causes,
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
            required_terms,
        )

    container_names: set[str] = set()
    for field in ("initContainers", "containers"):
        for index, container in enumerate(as_list(spec.get(field))):
            entry = f"spec.{field}[{index}]"
            name = as_map(container).get("name")
            dns_label(causes, child(entry, "name"), name)
            if isinstance(name, str) and name:
                if name in container_names:
                    causes.duplicate(child(entry, "name"), name)
                container_names.add(name)
            if not as_map(container).get("image"):
                causes.required(child(entry, "image"))
            for claim_index, claim in enumerate(
                as_list(as_map(as_map(container).get("resources")).get("claims"))
            ):
                claim_path = f"{entry}.resources.claims[{claim_index}].name"
                claim_name = as_map(claim).get("name")
                if not claim_name:
                    causes.required(claim_path)
                elif hashable(claim_name) not in claim_names:
                    causes.not_supported(claim_path, claim_name, sorted(claim_names))
    if spec.get("nodeName"):
        dns_subdomain(causes, "spec.nodeName", spec["nodeName"])
    for index, toleration in enumerate(as_list(spec.get("tolerations"))):
        operator = as_map(toleration).get("operator") or "Equal"
        if operator not in ("Equal", "Exists"):
            causes.not_supported(f"spec.tolerations[{index}].operator", operator, ["Equal", "Exists"])

    if old is not None and subresource not in ("status", "binding", "ephemeralcontainers", "resize"):
        old_spec = as_map(old.get("spec"))
        if _pod_spec_without_mutable(spec) != _pod_spec_without_mutable(old_spec):
            causes.forbidden(
                "spec",
                "pod updates may not change fields other than `spec.containers[*].image`, "
                "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` "
                "(only additions to existing tolerations) or `spec.terminationGracePeriodSeconds` "
                "(allow it to be set to 1 if it was previously negative)",
            )
        old_tolerations = as_list(old_spec.get("tolerations"))
        new_tolerations = as_list(spec.get("tolerations"))
        if new_tolerations[: len(old_tolerations)] != old_tolerations and any(
            t not in new_tolerations for t in old_tolerations
        ):
            causes.forbidden(
                "spec.tolerations", "existing toleration can not be modified except its tolerationSeconds"
            )
    return []


def _pod_spec_without_mutable(spec: dict[str, Any]) -> dict[str, Any]:
    stripped = {k: v for k, v in spec.items() if k not in _POD_MUTABLE}
    for field in ("containers", "initContainers"):
        if field in stripped:
            stripped[field] = [
                {k: v for k, v in as_map(c).items() if k != "image"} for c in as_list(stripped[field])
            ]
    return stripped


def check_node(causes: Causes, obj: dict[str, Any]) -> list[str]:
    for index, taint in enumerate(as_list(as_map(obj.get("spec")).get("taints"))):
        entry = f"spec.taints[{index}]"
        qualified_name(causes, child(entry, "key"), as_map(taint).get("key"))
        label_value(causes, child(entry, "value"), as_map(taint).get("value"))
        effect = as_map(taint).get("effect")
        supported = ["NoExecute", "NoSchedule", "PreferNoSchedule"]
        if not effect:
            causes.required(child(entry, "effect"))
        elif effect not in supported:
            causes.not_supported(child(entry, "effect"), effect, supported)
    return []


def check_pdb(causes: Causes, obj: dict[str, Any]) -> list[str]:
    spec = as_map(obj.get("spec"))
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        causes.invalid("spec", "object", "minAvailable and maxUnavailable cannot be both set")
    return []


def check_namespace(
    causes: Causes, obj: dict[str, Any], old: dict[str, Any] | None, subresource: str | None
) -> list[str]:
    """spec.finalizers (ValidateNamespace on create, ValidateNamespaceFinalizeUpdate through `finalize`;
    other updates keep the stored ones): qualified names, and a name without a domain a standard one."""
    if old is not None and subresource != "finalize":
        return []
    for index, finalizer in enumerate(as_list(as_map(obj.get("spec")).get("finalizers"))):
        path = "spec.finalizers" if old is None else f"spec.finalizers[{index}]"
        qualified_name(causes, path, finalizer)
        if isinstance(finalizer, str) and "/" not in finalizer and finalizer not in _STANDARD_FINALIZERS:
            causes.invalid(
                path, finalizer, "name is neither a standard finalizer name nor is it fully qualified"
            )
    return []
