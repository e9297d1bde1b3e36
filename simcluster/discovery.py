"""Discovery documents: /version, the legacy /api and /apis documents, and aggregated discovery (v2)."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from simcluster.resources import GROUP_VERSIONS, RESOURCES, ResourceDef

Doc = dict[str, Any]

AGGREGATED_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"

VERSION_INFO: Doc = {
    "major": "1",
    "minor": "37",
    "emulationMajor": "1",
    "emulationMinor": "37",
    "minCompatibilityMajor": "1",
    "minCompatibilityMinor": "36",
    "gitVersion": "v1.37.1",
    "gitCommit": "5d1b3c3a7e0f4c2b9a8d6e1f0c3b2a1d4e5f6a7b",
    "gitTreeState": "clean",
    "buildDate": "2026-09-16T10:12:31Z",
    "goVersion": "go1.26.1",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def _storage_hash(resource: ResourceDef) -> str:
    digest = hashlib.sha256(f"{resource.group}/{resource.version}/{resource.kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


#: kube-apiserver's group priorities (its aggregator's APIService table): /apis lists groups highest first.
_GROUP_PRIORITY: dict[str, int] = {
    "apps": 17800,
    "authentication.k8s.io": 17700,
    "authorization.k8s.io": 17600,
    "batch": 17400,
    "networking.k8s.io": 17200,
    "policy": 17100,
    "rbac.authorization.k8s.io": 17000,
    "scheduling.k8s.io": 16600,
    "coordination.k8s.io": 16500,
    "discovery.k8s.io": 16200,
    "resource.k8s.io": 15900,
}


def _versions(group: str) -> list[str]:
    return GROUP_VERSIONS.get(group, [])


def _groups() -> list[str]:
    """The named groups in the order /apis lists them (by priority, then name)."""
    return sorted((g for g in GROUP_VERSIONS if g), key=lambda g: (-_GROUP_PRIORITY.get(g, 0), g))


def api_versions(server_address: str) -> Doc:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group_entry(group: str) -> Doc:
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for v in _versions(group)]
    return {"name": group, "versions": versions, "preferredVersion": versions[0]}


def api_group_list() -> Doc:
    groups = [_group_entry(g) for g in _groups()]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(group: str) -> Doc | None:
    if not group or group not in GROUP_VERSIONS:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(group)}


def api_resource_list(group: str, version: str) -> Doc | None:
    selected = [r for r in RESOURCES if r.group == group and r.version == version]
    if not selected:
        return None
    resources: list[Doc] = []
    for r in selected:
        entry: Doc = {
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": list(r.verbs),
        }
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        entry["storageVersionHash"] = _storage_hash(r)
        resources.append(entry)
        for sub in r.subresource_specs():
            sub_entry: Doc = {
                "name": f"{r.plural}/{sub.name}",
                "singularName": "",
                "namespaced": r.namespaced,
            }
            if (sub.group, sub.version) != (r.group, r.version):
                sub_entry["group"] = sub.group
                sub_entry["version"] = sub.version
            sub_entry["kind"] = sub.kind
            sub_entry["verbs"] = list(sub.verbs)
            resources.append(sub_entry)
    # The API installer registers a group version's paths sorted, subresources after their resource.
    resources.sort(key=lambda entry: str(entry["name"]))
    group_version = f"{group}/{version}" if group else version
    doc: Doc = {"kind": "APIResourceList", "groupVersion": group_version, "resources": resources}
    if group:
        doc["apiVersion"] = "v1"
    return doc


def _aggregated_resource(r: ResourceDef) -> Doc:
    entry: Doc = {
        "resource": r.plural,
        "responseKind": {"group": "", "version": "", "kind": r.kind},
        "scope": "Namespaced" if r.namespaced else "Cluster",
        "singularResource": r.singular,
        "verbs": list(r.verbs),
    }
    if r.short_names:
        entry["shortNames"] = list(r.short_names)
    if r.categories:
        entry["categories"] = list(r.categories)
    if r.subresources:
        entry["subresources"] = [
            {
                "subresource": sub.name,
                "responseKind": {
                    "group": sub.group if sub.kind != r.kind else "",
                    "version": sub.version if sub.kind != r.kind else "",
                    "kind": sub.kind,
                },
                "verbs": list(sub.verbs),
            }  # fmt: skip
            for sub in r.subresource_specs()
        ]
    return entry


def aggregated(*, legacy: bool, version: str = "v2") -> Doc:
    """The APIGroupDiscoveryList for /api (legacy=True) or /apis."""
    groups = [""] if legacy else _groups()
    items: list[Doc] = []
    for group in groups:
        versions = []
        for v in _versions(group):
            resources = sorted(
                (_aggregated_resource(r) for r in RESOURCES if r.group == group and r.version == v),
                key=lambda d: str(d["resource"]),
            )
            versions.append({"version": v, "resources": resources, "freshness": "Current"})
        metadata: Doc = {"creationTimestamp": None}
        if group:
            metadata = {"name": group, "creationTimestamp": None}
        items.append({"metadata": metadata, "versions": versions})
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"apidiscovery.k8s.io/{version}",
        "metadata": {},
        "items": items,
    }


def wants_aggregated(accept: str) -> str | None:
    """The aggregated discovery version the Accept header asks for first, if any."""
    for part in accept.split(","):
        params = {k.strip(): v.strip() for k, _, v in (p.partition("=") for p in part.split(";")[1:])}
        if params.get("g") == "apidiscovery.k8s.io" and params.get("as") == "APIGroupDiscoveryList":
            version = params.get("v", "")
            if version in ("v2", "v2beta1"):
                return version
    return None
