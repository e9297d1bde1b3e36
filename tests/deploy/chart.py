"""Reading the rendered chart: manifests per value set (rendered once), RBAC rules as the authorizer reads
them, and the pods' containers."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tests.deploy.values import VALUE_SETS
from tests.helm import find, render

JSON = dict[str, Any]


@functools.cache
def _rendered(name: str) -> tuple[JSON, ...]:
    return tuple(render(VALUE_SETS[name]))


def rendered(name: str) -> list[JSON]:
    """The manifests of value set `name` (shared between tests: read them, do not change them)."""
    return list(_rendered(name))


@dataclass(frozen=True)
class Rule:
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    resource_names: tuple[str, ...]
    non_resource_urls: tuple[str, ...]

    @classmethod
    def from_json(cls, rule: JSON) -> Rule:
        return cls(
            tuple(rule.get("apiGroups") or ()),
            tuple(rule.get("resources") or ()),
            tuple(rule.get("verbs") or ()),
            tuple(rule.get("resourceNames") or ()),
            tuple(rule.get("nonResourceURLs") or ()),
        )

    def allows(self, group: str, resource: str, verb: str, name: str | None) -> bool:
        """RBAC's rule matching: `*` matches anything (the chart must never need it); resourceNames, when
        present, limit the rule to those names, so a request without a name (list, create) does not match."""
        return (
            (group in self.api_groups or "*" in self.api_groups)
            and (resource in self.resources or "*" in self.resources)
            and (verb in self.verbs or "*" in self.verbs)
            and (not self.resource_names or (name is not None and name in self.resource_names))
        )


def rules(manifests: list[JSON], kind: str) -> list[Rule]:
    """Every rule of every `kind` (ClusterRole or Role) in the manifests."""
    return [Rule.from_json(rule) for m in manifests if m["kind"] == kind for rule in m.get("rules") or []]


def allowed(manifests: list[JSON], group: str, resource: str, verb: str, *, name: str | None = None) -> bool:
    """May the chart's service account do this cluster-wide (through the ClusterRole)?"""
    return any(rule.allows(group, resource, verb, name) for rule in rules(manifests, "ClusterRole"))


def pod_templates(manifests: list[JSON]) -> Iterator[tuple[str, JSON]]:
    """(Deployment or Job name, pod spec) of every workload."""
    for m in manifests:
        if m["kind"] in ("Deployment", "Job"):
            yield m["metadata"]["name"], m["spec"]["template"]["spec"]


def containers(pod: JSON) -> list[JSON]:
    return [*(pod.get("initContainers") or []), *pod["containers"]]


def deployment_pod(manifests: list[JSON], component: str) -> JSON:
    spec: JSON = find(manifests, "Deployment", f"dradash-{component}")["spec"]["template"]["spec"]
    return spec


def main_container(manifests: list[JSON], component: str) -> JSON:
    pod = deployment_pod(manifests, component)
    (container,) = [c for c in pod["containers"] if c["name"] == component]
    return container


def env_value(container: JSON, name: str) -> str:
    (entry,) = [e for e in container["env"] if e["name"] == name]
    value: str = entry["value"]
    return value
