"""What a what-if asks about: input validation at creation, and resolution against a snapshot into the
claims to allocate (a `Subject`)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import yaml

from allocation.snapshot import Obj, Snapshot
from allocation.whatif_common import WhatIfInputError, allocation_results, meta
from dra.extended import (
    ExtendedRequest,
    extended_claim,
    extended_requests,
    extended_resources,
    is_extended_resource_name,
    served_by_device_plugin,
)
from dra.selection import node_selector_matches

SUBJECT_KINDS = ("ResourceClaim", "ResourceClaimTemplate", "Pod")
EFFECTS = ("None", "NoSchedule", "NoExecute")
MAX_YAML_BYTES = 256 * 1024
DEFAULT_MAX_PER_NODE = 256


# --------------------------------------------------------------------------- validation at creation


def _str(
    data: dict[str, Any], key: str, field_name: str, *, required: bool = True, max_len: int = 253
) -> str:
    value = data.get(key)
    if value is None or value == "":
        if required:
            raise WhatIfInputError(field_name, "is required")
        return ""
    if not isinstance(value, str):
        raise WhatIfInputError(field_name, "must be a string")
    if len(value) > max_len:
        raise WhatIfInputError(field_name, f"must be at most {max_len} characters")
    return value


def parse_yaml_subject(text: str, *, allowed: tuple[str, ...] = SUBJECT_KINDS) -> Obj:
    """One YAML (or JSON) document holding a ResourceClaim, ResourceClaimTemplate or Pod."""
    if len(text.encode()) > MAX_YAML_BYTES:
        raise WhatIfInputError("input.yaml", f"must be at most {MAX_YAML_BYTES} bytes")
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        raise WhatIfInputError("input.yaml", f"is not valid YAML: {exc}") from None
    if len(docs) != 1:
        raise WhatIfInputError("input.yaml", f"must hold exactly one object, found {len(docs)}")
    obj = docs[0]
    if not isinstance(obj, dict):
        raise WhatIfInputError("input.yaml", "must be a mapping (a Kubernetes object)")
    kind = obj.get("kind")
    if kind not in allowed:
        raise WhatIfInputError("input.yaml.kind", f"must be one of {', '.join(allowed)}, got {kind!r}")
    if not isinstance(obj.get("spec"), dict):
        raise WhatIfInputError("input.yaml.spec", "is required and must be a mapping")
    if kind == "ResourceClaim" and not isinstance(obj["spec"].get("devices"), dict):
        raise WhatIfInputError("input.yaml.spec.devices", "is required for a ResourceClaim")
    if kind == "ResourceClaimTemplate" and not isinstance(
        (obj["spec"].get("spec") or {}).get("devices"), dict
    ):
        raise WhatIfInputError("input.yaml.spec.spec.devices", "is required for a ResourceClaimTemplate")
    if kind == "Pod" and not isinstance(obj["spec"].get("containers"), list):
        raise WhatIfInputError("input.yaml.spec.containers", "is required for a Pod")
    if not isinstance(obj.get("metadata") or {}, dict):
        raise WhatIfInputError("input.yaml.metadata", "must be a mapping")
    return obj


def normalize_input(kind: str, data: Any) -> dict[str, Any]:
    """Validate what-if input for `kind`; returns the canonical form stored on the run."""
    if not isinstance(data, dict):
        raise WhatIfInputError("input", "must be an object")
    if kind == "taint_impact":
        return _normalize_taint(data)
    if kind not in ("feasibility", "headroom"):
        raise WhatIfInputError("kind", "must be one of feasibility, headroom, taint_impact")
    allowed = SUBJECT_KINDS if kind == "feasibility" else ("ResourceClaim", "ResourceClaimTemplate")
    source = data.get("source")
    out: dict[str, Any]
    if source == "yaml":
        text = _str(data, "yaml", "input.yaml", max_len=MAX_YAML_BYTES)
        parse_yaml_subject(text, allowed=allowed)
        out = {"source": "yaml", "yaml": text}
    elif source == "pick":
        picked = _str(data, "kind", "input.kind", max_len=64)
        if picked not in allowed:
            raise WhatIfInputError("input.kind", f"must be one of {', '.join(allowed)}, got {picked!r}")
        out = {
            "source": "pick",
            "kind": picked,
            "namespace": _str(data, "namespace", "input.namespace", max_len=63),
            "name": _str(data, "name", "input.name"),
        }
    elif source == "class" and kind == "headroom":
        out = {"source": "class", "deviceClassName": _str(data, "deviceClassName", "input.deviceClassName")}
        count = data.get("count", 1)
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 32:
            raise WhatIfInputError("input.count", "must be an integer from 1 to 32")
        out["count"] = count
    else:
        choices = "yaml, pick" + (", class" if kind == "headroom" else "")
        raise WhatIfInputError("input.source", f"must be one of {choices}, got {source!r}")
    if kind == "headroom":
        cap = data.get("max_per_node", DEFAULT_MAX_PER_NODE)
        if not isinstance(cap, int) or isinstance(cap, bool) or not 1 <= cap <= 10_000:
            raise WhatIfInputError("input.max_per_node", "must be an integer from 1 to 10000")
        out["max_per_node"] = cap
    node = _str(data, "node", "input.node", required=False)
    if node:
        out["node"] = node
    return out


MAX_SELECTORS = 10_000


def _normalize_selector(selector: Any, field_name: str) -> dict[str, str]:
    if not isinstance(selector, dict):
        raise WhatIfInputError(field_name, "must be an object with driver, pool and/or device")
    unknown = set(selector) - {"driver", "pool", "device"}
    if unknown:
        raise WhatIfInputError(field_name, f"unknown field(s) {', '.join(sorted(unknown))}")
    sel = {k: _str(selector, k, f"{field_name}.{k}", required=False) for k in ("driver", "pool", "device")}
    return {k: v for k, v in sel.items() if v}


def _normalize_taint(data: dict[str, Any]) -> dict[str, Any]:
    """One `selector`, or `selectors` (one DeviceTaintRule each, as maintenance writes them)."""
    if "selectors" in data:
        raw = data["selectors"]
        if not isinstance(raw, list) or not raw or len(raw) > MAX_SELECTORS:
            raise WhatIfInputError("input.selectors", f"must be a list of 1 to {MAX_SELECTORS} selectors")
        selectors = [_normalize_selector(s, f"input.selectors[{i}]") for i, s in enumerate(raw)]
    elif "selector" in data:
        selectors = [_normalize_selector(data["selector"], "input.selector")]
    else:
        raise WhatIfInputError("input.selector", "is required: an object with driver, pool and/or device")
    taint = data.get("taint")
    if not isinstance(taint, dict):
        raise WhatIfInputError("input.taint", "is required: an object with key, value and effect")
    key = _str(taint, "key", "input.taint.key")
    if len(key) > 316 or " " in key:
        raise WhatIfInputError("input.taint.key", "must be a qualified name (prefix/name, no spaces)")
    value = _str(taint, "value", "input.taint.value", required=False, max_len=63)
    effect = _str(taint, "effect", "input.taint.effect", max_len=16)
    if effect not in EFFECTS:
        raise WhatIfInputError("input.taint.effect", f"must be one of {', '.join(EFFECTS)}, got {effect!r}")
    return {"selectors": selectors, "taint": {"key": key, "value": value, "effect": effect}}


def check_pick_exists(data: dict[str, Any], snapshot_find: Any) -> None:
    """At creation: a picked object must exist in the mirror now (`snapshot_find(kind, ns, name)`)."""
    if data.get("source") == "pick" and snapshot_find(data["kind"], data["namespace"], data["name"]) is None:
        raise WhatIfInputError(
            "input.name", f"{data['kind']} {data['namespace']}/{data['name']} is not in the inventory"
        )


# --------------------------------------------------------------------------- resolution in the worker


@dataclass
class Subject:
    kind: str
    namespace: str
    name: str
    claims: list[Obj] = field(default_factory=list)  # to allocate, fresh
    fixed: list[Obj] = field(default_factory=list)  # already allocated claims the pod must go along with
    exclude_uids: set[str] = field(default_factory=set)  # claims re-evaluated as if pending
    extended: list[ExtendedRequest] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)  # reasons it cannot be allocated anywhere
    notes: list[str] = field(default_factory=list)
    pod: Obj | None = None
    claim_sources: dict[str, str] = field(default_factory=dict)  # claim name → where it came from

    @property
    def label(self) -> str:
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"

    def node_allows(self, node: Obj, *, ignore_bound_node: bool = False) -> str | None:
        """Why the pod cannot go to `node` regardless of devices, or None.

        `ignore_bound_node`: for a replacement of the pod (after an eviction), which is not bound yet.
        """
        if self.pod is None:
            return None
        spec = self.pod.get("spec") or {}
        node_name = meta(node).get("name")
        if spec.get("nodeName") and spec["nodeName"] != node_name and not ignore_bound_node:
            return f"pod is bound to node {spec['nodeName']}"
        labels = meta(node).get("labels") or {}
        for k, v in (spec.get("nodeSelector") or {}).items():
            if labels.get(k) != v:
                return f"pod nodeSelector {k}={v} does not match"
        for claim in self.fixed:
            selector = ((claim.get("status") or {}).get("allocation") or {}).get("nodeSelector")
            if selector and not node_selector_matches(selector, node):
                return f"claim {meta(claim).get('name')} is allocated on devices not reachable from this node"
        return None

    def claims_for(self, node: Obj) -> tuple[list[Obj], list[str]]:
        """Claims to allocate on `node` (the extended-resource claim depends on the node), and notes."""
        if not self.extended:
            return self.claims, []
        dra = [r for r in self.extended if not served_by_device_plugin(node, r.resource)]
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        notes = [
            f"{r.resource} is served by a device plugin on this node (allocatable {allocatable[r.resource]})"
            for r in self.extended
            if r not in dra
        ]
        if not dra:
            return self.claims, notes
        claim = extended_claim(
            self.pod or {"metadata": {"name": self.name, "namespace": self.namespace}}, dra
        )
        claim["metadata"]["uid"] = f"whatif-{self.name}-extended-resources"
        return [*self.claims, claim], notes


def _extended_requests(pod: Obj, classes: list[Obj], notes: list[str]) -> list[ExtendedRequest]:
    mapping = extended_resources(classes).classes
    out = extended_requests(pod, mapping)
    spec = pod.get("spec") or {}
    unmapped: set[str] = set()
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        resources = container.get("resources") or {}
        for resource in {**(resources.get("limits") or {}), **(resources.get("requests") or {})}:
            if is_extended_resource_name(resource) and resource not in mapping:
                unmapped.add(resource)
    for resource in sorted(unmapped):
        notes.append(f"{resource} is not served by any DeviceClass: left to device plugins, not checked here")
    return out


def _fresh_claim(name: str, namespace: str, spec: dict[str, Any]) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace, "uid": f"whatif-{namespace}-{name}"},
        "spec": copy.deepcopy(spec),
    }


def _find(objs: list[Obj], namespace: str, name: str) -> Obj | None:
    for o in objs:
        m = meta(o)
        if m.get("name") == name and (m.get("namespace") or "") == namespace:
            return o
    return None


def resolve_subject(data: dict[str, Any], snapshot: Snapshot) -> Subject:
    """Turn stored input into the claims to allocate, read against `snapshot`."""
    if data.get("source") == "class":
        cls = data["deviceClassName"]
        subject = Subject(kind="DeviceClass", namespace="", name=cls)
        if snapshot.find("DeviceClass", "", cls) is None:
            raise WhatIfInputError("input.deviceClassName", f"DeviceClass {cls} is not in the inventory")
        spec = {
            "devices": {
                "requests": [
                    {"name": "device", "exactly": {"deviceClassName": cls, "count": data.get("count", 1)}}
                ]
            }
        }
        subject.claims.append(_fresh_claim(f"{cls}-copy", "default", spec))
        subject.claim_sources[f"{cls}-copy"] = f"{data.get('count', 1)} device(s) of DeviceClass {cls}"
        return subject
    if data.get("source") == "yaml":
        obj = parse_yaml_subject(data["yaml"])
        existing = None
    else:
        obj = snapshot.find(data["kind"], data["namespace"], data["name"])
        if obj is None:
            raise WhatIfInputError(
                "input.name",
                f"{data['kind']} {data['namespace']}/{data['name']} is no longer in the inventory",
            )
        existing = obj
    m = meta(obj)
    namespace = str(m.get("namespace") or "default")
    name = str(m.get("name") or m.get("generateName") or "pasted")
    subject = Subject(kind=str(obj["kind"]), namespace=namespace, name=name)
    if obj["kind"] == "ResourceClaim":
        subject.claims.append(_fresh_claim(name, namespace, obj["spec"]))
        subject.claim_sources[name] = "the claim"
        if existing is not None and allocation_results(existing):
            subject.exclude_uids.add(str(m.get("uid")))
            subject.notes.append(
                "this claim is allocated now; answered as if it were pending (its own devices count as free)"
            )
    elif obj["kind"] == "ResourceClaimTemplate":
        claim_name = f"{name}-copy"
        subject.claims.append(_fresh_claim(claim_name, namespace, obj["spec"].get("spec") or {}))
        subject.claim_sources[claim_name] = f"from template {name}"
    else:
        _resolve_pod(subject, obj, snapshot)
    return subject


def resolve_pod_subject(pod: Obj, snapshot: Snapshot, *, release_uids: set[str] | None = None) -> Subject:
    """The claims a pod needs; claims whose uid is in `release_uids` count as deallocated (their pod was
    evicted: a replacement gets them, or new ones from the same templates, allocated afresh)."""
    m = meta(pod)
    subject = Subject(
        kind="Pod", namespace=str(m.get("namespace") or "default"), name=str(m.get("name") or "pod")
    )
    _resolve_pod(subject, pod, snapshot, release_uids=release_uids or set())
    return subject


def _allocated(claim: Obj, release_uids: set[str]) -> bool:
    return (
        bool((claim.get("status") or {}).get("allocation"))
        and str(meta(claim).get("uid")) not in release_uids
    )


def _resolve_pod(
    subject: Subject, pod: Obj, snapshot: Snapshot, *, release_uids: set[str] | None = None
) -> None:
    released = release_uids or set()
    subject.pod = pod
    ns = subject.namespace
    statuses = {
        s.get("name"): s.get("resourceClaimName")
        for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []
    }
    for pc in (pod.get("spec") or {}).get("resourceClaims") or []:
        pc_name = str(pc.get("name", ""))
        if pc.get("resourceClaimName"):
            claim = _find(snapshot.claims, ns, pc["resourceClaimName"])
            if claim is None:
                subject.blockers.append(
                    f"ResourceClaim {ns}/{pc['resourceClaimName']} (pod claim {pc_name}) does not exist"
                )
            elif _allocated(claim, released):
                subject.fixed.append(claim)
                subject.notes.append(
                    f"claim {pc['resourceClaimName']} is already allocated; the pod must go where its devices are"
                )
            else:
                subject.claims.append(_fresh_claim(str(meta(claim)["name"]), ns, claim.get("spec") or {}))
                subject.claim_sources[str(meta(claim)["name"])] = f"pod claim {pc_name}"
        elif pc.get("resourceClaimTemplateName"):
            generated = _find(snapshot.claims, ns, statuses[pc_name]) if statuses.get(pc_name) else None
            if generated is not None and _allocated(generated, released):
                subject.fixed.append(generated)
                continue
            template = _find(snapshot.templates, ns, pc["resourceClaimTemplateName"])
            if template is None:
                subject.blockers.append(
                    f"ResourceClaimTemplate {ns}/{pc['resourceClaimTemplateName']} (pod claim {pc_name}) does not exist"
                )
                continue
            claim_name = f"{subject.name}-{pc_name}"
            subject.claims.append(
                _fresh_claim(claim_name, ns, (template.get("spec") or {}).get("spec") or {})
            )
            subject.claim_sources[claim_name] = (
                f"pod claim {pc_name} from template {pc['resourceClaimTemplateName']}"
            )
        else:
            subject.blockers.append(f"pod claim {pc_name} names neither a claim nor a template")
    ext_status = (pod.get("status") or {}).get("extendedResourceClaimStatus") or {}
    if ext_status.get("resourceClaimName"):
        claim = _find(snapshot.claims, ns, ext_status["resourceClaimName"])
        if claim is not None and _allocated(claim, released):
            subject.fixed.append(claim)
            return
    subject.extended = _extended_requests(pod, snapshot.classes, subject.notes)
    if subject.extended:
        subject.claim_sources[f"{subject.name}-extended-resources"] = "extended resources " + ", ".join(
            f"{r.resource}: {r.count} → {r.device_class}" for r in subject.extended
        )
