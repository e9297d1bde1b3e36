"""What a request asks to do, read from its method and path as upstream's RequestInfoFactory reads it."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from simcluster.auth import UserInfo
from simcluster.rbac import Attributes, FieldRequirement
from simcluster.selectors import SelectorError, field_requirements

_METHOD_VERBS = {
    "POST": "create",
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


def request_attributes(user: UserInfo, method: str, path: str, query: Mapping[str, str]) -> Attributes:
    parts = [p for p in path.split("/") if p]
    non_resource = Attributes(user, method.lower(), False, path=path)
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return non_resource
    rest = parts[1:]
    group = ""
    if parts[0] == "apis":
        if len(rest) < 3:
            return non_resource
        group, rest = rest[0], rest[1:]
    version, rest = rest[0], rest[1:]
    verb = _METHOD_VERBS.get(method.upper(), method.lower())
    namespace = ""
    if rest and rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) >= 2 else ""
    subresource = rest[2] if len(rest) >= 3 else ""
    watch = query.get("watch", "").lower() in ("true", "1")
    if verb == "get":
        if not name:
            verb = "watch" if watch else "list"
            name = _exact_name(query.get("fieldSelector", ""))
        elif watch and not subresource:
            verb = "watch"
    elif verb == "delete" and not name:
        verb = "deletecollection"
    selector: tuple[FieldRequirement, ...] = ()
    if verb in ("list", "watch", "deletecollection"):  # only these have their selectors read, as upstream
        with contextlib.suppress(SelectorError):  # the list answers 400; authorizers see no requirements
            selector = tuple(field_requirements(query.get("fieldSelector", "")))

    return Attributes(user, verb, True, path=path, api_group=group, api_version=version, resource=resource,
                      subresource=subresource, name=name, namespace=namespace, field_selector=selector)  # fmt: skip


def _exact_name(selector: str) -> str:
    """A list narrowed by `fieldSelector=metadata.name=X` is authorized as a request for X, as upstream."""
    for term in selector.split(","):
        key, sep, value = term.partition("=")
        key = key.rstrip("=")
        value = value.lstrip("=")
        if sep and key.strip() == "metadata.name" and not key.endswith("!") and value and "/" not in value:
            return value.strip()
    return ""
