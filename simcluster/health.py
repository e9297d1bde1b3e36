"""/healthz, /livez and /readyz as kube-apiserver answers them (`kubectl get --raw='/readyz?verbose'`).

The simulated server has nothing that can fail, so every check passes; what matters is the shape: `ok`
plain, the `[+]name ok` list and `<endpoint> check passed` with `?verbose`, `excluded: ok` and the warning
for `?exclude=`, and one path per check (`/readyz/etcd`).
"""

from __future__ import annotations

from collections.abc import Iterable

_POST_START_HOOKS = (
    "start-apiserver-admission-initializer",
    "generic-apiserver-start-informers",
    "priority-and-fairness-config-consumer",
    "priority-and-fairness-filter",
    "storage-object-count-tracker-hook",
    "start-apiextensions-informers",
    "start-apiextensions-controllers",
    "crd-informer-synced",
    "start-system-namespaces-controller",
    "start-cluster-authentication-info-controller",
    "start-kube-apiserver-identity-lease-controller",
    "start-kube-apiserver-identity-lease-garbage-collector",
    "start-legacy-token-tracking-controller",
    "start-service-ip-repair-controllers",
    "rbac/bootstrap-roles",
    "scheduling/bootstrap-system-priority-classes",
    "priority-and-fairness-config-producer",
    "bootstrap-controller",
    "start-kubernetes-service-cidr-controller",
    "aggregator-reload-proxy-client-cert",
    "start-kube-aggregator-informers",
    "apiservice-status-local-available-controller",
    "apiservice-status-remote-available-controller",
    "apiservice-registration-controller",
    "apiservice-discovery-controller",
    "kube-apiserver-autoregistration",
)
_HOOKS = tuple(f"poststarthook/{name}" for name in _POST_START_HOOKS)
_OPENAPI_HOOKS = (
    "poststarthook/apiservice-openapi-controller",
    "poststarthook/apiservice-openapiv3-controller",
)

CHECKS: dict[str, tuple[str, ...]] = {
    "healthz": ("ping", "log", "etcd", *_HOOKS, "autoregister-completion", *_OPENAPI_HOOKS),
    "livez": ("ping", "log", "etcd", *_HOOKS, "autoregister-completion", *_OPENAPI_HOOKS),
    "readyz": ("ping", "log", "etcd", "etcd-readiness", "informer-sync", *_HOOKS, "autoregister-completion",
               *_OPENAPI_HOOKS, "shutdown"),
}  # fmt: skip


def answer(endpoint: str, check: str, *, verbose: bool, exclude: Iterable[str]) -> str | None:
    """The text body for /<endpoint>[/<check>]; None when no such check exists (a 404)."""
    checks = CHECKS[endpoint]
    if check:
        return "ok" if check in checks else None
    if not verbose:
        return "ok"
    excluded = {name.strip() for value in exclude for name in value.split(",") if name.strip()}
    lines = [f"[+]{name} excluded: ok" if name in excluded else f"[+]{name} ok" for name in checks]
    unknown = sorted(excluded - set(checks))
    if unknown:
        quoted = ",".join(f'"{name}"' for name in unknown)
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}")
    return "\n".join(lines) + f"\n{endpoint} check passed\n"
