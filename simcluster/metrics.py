"""/metrics as kube-apiserver serves it (`kubectl get --raw /metrics`), to whoever may `get` that path
(cluster-admin, the `system:monitoring` group): Prometheus' text format with a few of the server's stable
metrics under their upstream names, help and labels.

- `kubernetes_build_info`: the version `/version` reports;
- `apiserver_storage_objects`: how many objects of each kind are stored (`resource` is `<plural>.<group>`);
- `apiserver_request_total`: the resource requests answered, by verb as upstream's metrics report it (LIST,
  WATCH and APPLY apart from GET and PATCH), dry run, group, version, resource, subresource, scope and code.

What is left out: latencies, sizes, etcd, flow control, Go runtime and process metrics, and the counts of
requests that name no resource (discovery, health, OpenAPI).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable

from simcluster.discovery import VERSION_INFO
from simcluster.rbac import Attributes
from simcluster.resources import RESOURCES
from simcluster.store import Store

#: client_golang's answer to a scrape that asks for no other format (expfmt.FmtText, underscore escaping)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"

_APPLY_PATCH = "application/apply-patch+yaml"
_REQUEST_LABELS = (
    "code",
    "component",
    "dry_run",
    "group",
    "resource",
    "scope",
    "subresource",
    "verb",
    "version",
)
_BUILD_LABELS = {
    "build_date": "buildDate",
    "compiler": "compiler",
    "git_commit": "gitCommit",
    "git_tree_state": "gitTreeState",
    "git_version": "gitVersion",
    "go_version": "goVersion",
    "major": "major",
    "minor": "minor",
    "platform": "platform",
}


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(pairs: Iterable[tuple[str, str]]) -> str:
    return "{" + ",".join(f'{name}="{_escape(value)}"' for name, value in pairs) + "}"


def _family(name: str, kind: str, help_text: str, samples: Iterable[tuple[str, int]]) -> list[str]:
    return [
        f"# HELP {name} {help_text}",
        f"# TYPE {name} {kind}",
        *(f"{name}{lbl} {v}" for lbl, v in samples),
    ]


def reported_verb(attrs: Attributes, method: str, content_type: str) -> str:
    """The verb upstream's request metrics report (`metrics.CleanVerb` over the handler's action verb)."""
    if attrs.verb in ("list", "watch", "deletecollection"):
        return attrs.verb.upper()
    if method == "PATCH" and content_type.split(";")[0].strip() == _APPLY_PATCH:
        return "APPLY"
    return "GET" if method == "HEAD" else method


class RequestMetrics:
    """What the server has answered, counted as `apiserver_request_total` counts it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: Counter[tuple[str, ...]] = Counter()

    def observe(
        self, attrs: Attributes, method: str, dry_run: Iterable[str], content_type: str, code: int
    ) -> None:
        if not attrs.resource_request:
            return
        if attrs.name or attrs.verb == "create":  # metrics.CleanScope
            scope = "resource"
        elif attrs.namespace:
            scope = "namespace"
        else:
            scope = "cluster"
        asked = set(dry_run)
        dry_run_label = "invalid" if asked - {"All"} else ",".join(sorted(asked))  # metrics' cleanDryRun
        values = (str(code), "apiserver", dry_run_label, attrs.api_group, attrs.resource, scope, attrs.subresource,
                  reported_verb(attrs, method, content_type), attrs.api_version)  # fmt: skip
        with self._lock:
            self._requests[values] += 1

    def render(self, store: Store) -> str:
        build = _labels((label, str(VERSION_INFO[key])) for label, key in _BUILD_LABELS.items())
        lines = _family(
            "kubernetes_build_info", "gauge",
            "[ALPHA] A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree "
            "state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it "
            "is running.",
            [(build, 1)],
        )  # fmt: skip
        counts: dict[str, int] = {}
        for resource in RESOURCES:
            if resource.review:
                continue
            name = f"{resource.plural}.{resource.group}" if resource.group else resource.plural
            counts[name] = store.count(resource.plural)
        lines += _family(
            "apiserver_storage_objects", "gauge",
            "[STABLE] Number of stored objects at the time of last check split by kind. In case of a fetching "
            "error, the value will be -1.",
            [(_labels([("resource", name)]), counts[name]) for name in sorted(counts)],
        )  # fmt: skip
        with self._lock:
            requests = sorted(self._requests.items())
        if requests:
            lines += _family(
                "apiserver_request_total", "counter",
                "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, "
                "resource, scope, component, and HTTP response code.",
                [(_labels(zip(_REQUEST_LABELS, values, strict=True)), n) for values, n in requests],
            )  # fmt: skip
        return "\n".join(lines) + "\n"
