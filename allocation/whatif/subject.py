"""What a what-if asks about, resolved in the worker against its snapshot into the claims to allocate
(a `Subject`). The input was validated at submit time (`allocation.whatif.inputs`); what can still go
wrong here is the inventory changing in between, reported as one `WhatIfInputError`."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from allocation.snapshot import Obj, Snapshot
from allocation.whatif.base import WhatIfInputError
from allocation.whatif.inputs import parse_yaml_subject
from allocation.whatif.view import allocation_results, meta
from dra.extended import (
    ExtendedRequest,
    device_plugin_shortfall,
    extended_claim,
    extended_requests,
    extended_resources,
    is_extended_resource_name,
    pod_extended_counts,
    served_by_device_plugin,
)
from dra.nodefit import (
    UNSCHEDULABLE_TAINT_KEY,
    affinity_refuses,
    unschedulable_refuses,
    untolerated_node_taints,
)
from dra.selection import SelectorError, node_selector_matches


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
    #: (node, resource) → device-plugin devices other pods hold there (the pod's own use left out)
    plugin_used: dict[tuple[str, str], int] = field(default_factory=dict)

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
        # kube-scheduler's node filters, in its order (`dra.nodefit`, simcluster's scheduler's rule too)
        if unschedulable_refuses(self.pod, node):
            return f"node is cordoned and the pod does not tolerate {UNSCHEDULABLE_TAINT_KEY}:NoSchedule"
        for taint in untolerated_node_taints(self.pod, node)[:1]:
            shown = f"{taint.key}={taint.value}" if taint.value else taint.key
            return f"pod does not tolerate the node's taint {shown}:{taint.effect}"
        labels = meta(node).get("labels") or {}
        for k, v in (spec.get("nodeSelector") or {}).items():
            if labels.get(k) != v:
                return f"pod nodeSelector {k}={v} does not match"
        try:
            if affinity_refuses(self.pod, node):
                return "pod's required node affinity does not match"
        except SelectorError as error:
            return f"pod's required node affinity matches no node: {error}"
        for claim in self.fixed:
            selector = ((claim.get("status") or {}).get("allocation") or {}).get("nodeSelector")
            if selector and not node_selector_matches(selector, node):
                return f"claim {meta(claim).get('name')} is allocated on devices not reachable from this node"
        return device_plugin_shortfall(self.pod, node, self.plugin_used)

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
    """Turn stored input into the claims to allocate, read against `snapshot`.

    Something the question needs that the inventory does not have (any more) is one `WhatIfInputError`
    for the whole run, never the same complaint repeated for every node.
    """
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
        count = data.get("count", 1)
        subject.claim_sources[f"{cls}-copy"] = (
            f"{count} device{'' if count == 1 else 's'} of DeviceClass {cls}"
        )
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
        if subject.blockers:
            raise WhatIfInputError(
                "input.yaml" if data.get("source") == "yaml" else "input.name", "; ".join(subject.blockers)
            )
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
    if pod_extended_counts(pod):
        subject.plugin_used = snapshot.plugin_use(excluding_uid=str(meta(pod).get("uid") or ""))
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
