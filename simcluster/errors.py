"""`ApiError`: a Kubernetes `Status` failure, raised by the store and turned into the HTTP answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simcluster.resources import ResourceDef

_REASON_BY_CODE = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    500: "InternalError",
    504: "Timeout",
}


class ApiError(Exception):
    """A failed API call, carrying exactly what goes into the `Status` body."""

    status: int
    reason: str
    message: str
    details: dict[str, Any] | None

    def __init__(self, status: int, reason: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason or _REASON_BY_CODE.get(status, "")
        self.message = message
        self.details = details

    def to_status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.status
        return body

    def __repr__(self) -> str:
        return f"ApiError({self.status}, {self.reason!r}, {self.message!r})"


def _details(resource: ResourceDef, name: str, *, kind: str | None = None) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name} if name else {}  # StatusDetails.name is omitempty
    if resource.group:
        details["group"] = resource.group
    details["kind"] = kind or resource.plural
    return details


def not_found(resource: ResourceDef, name: str) -> ApiError:
    return ApiError(
        404, "NotFound", f'{resource.group_resource} "{name}" not found', _details(resource, name)
    )


def namespace_not_found(namespace: str) -> ApiError:
    return ApiError(
        404, "NotFound", f'namespaces "{namespace}" not found', {"name": namespace, "kind": "namespaces"}
    )


#: The StatusCause type NamespaceLifecycle adds when it refuses new content in a terminating namespace.
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"


def namespace_terminating(resource: ResourceDef, name: str, namespace: str) -> ApiError:
    """NamespaceLifecycle's refusal of a create in a namespace being deleted (admission.NewForbidden, plus
    the cause controllers look for to give up quietly)."""
    details = _details(resource, name)
    details["causes"] = [
        {
            "reason": NAMESPACE_TERMINATING_CAUSE,
            "message": f"namespace {namespace} is being terminated",
            "field": "metadata.namespace",
        }
    ]
    return ApiError(
        403,
        "Forbidden",
        f'{resource.group_resource} "{name}" is forbidden: unable to create new content in namespace '
        f"{namespace} because it is being terminated",
        details,
    )


def is_namespace_terminating(error: ApiError) -> bool:
    """True for a refusal because the namespace is being deleted (apierrors.HasStatusCause)."""
    causes = (error.details or {}).get("causes") or []
    return any(c.get("reason") == NAMESPACE_TERMINATING_CAUSE for c in causes if isinstance(c, dict))


def already_exists(resource: ResourceDef, name: str) -> ApiError:
    return ApiError(
        409, "AlreadyExists", f'{resource.group_resource} "{name}" already exists', _details(resource, name)
    )


def conflict(resource: ResourceDef, name: str, why: str | None = None) -> ApiError:
    why = why or "the object has been modified; please apply your changes to the latest version and try again"
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {resource.group_resource} "{name}": {why}',
        _details(resource, name),
    )


def invalid(resource: ResourceDef, name: str, causes: list[dict[str, Any]]) -> ApiError:
    parts = [
        f"{c.get('field', '')}: {c.get('message', '')}" if c.get("field") else str(c.get("message", ""))
        for c in causes
    ]
    summary = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    details = _details(resource, name, kind=resource.kind)
    details["causes"] = causes
    return ApiError(422, "Invalid", f'{resource.qualified_kind} "{name}" is invalid: {summary}', details)


def forbidden_cause(field: str, detail: str) -> dict[str, Any]:
    return {"reason": "FieldValueForbidden", "message": f"Forbidden: {detail}", "field": field}


def not_supported_cause(field: str, value: str, supported: list[str]) -> dict[str, Any]:
    listed = ", ".join(f'"{v}"' for v in supported)
    return {
        "reason": "FieldValueNotSupported",
        "message": f'Unsupported value: "{value}": supported values: {listed}',
        "field": field,
    }


def invalid_list_options(causes: list[dict[str, Any]]) -> ApiError:
    """What ValidateListOptions finds, as the list handler answers it: invalid ListOptions.meta.k8s.io ""."""
    parts = [f"{c['field']}: {c['message']}" for c in causes]
    summary = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    details = {"group": "meta.k8s.io", "kind": "ListOptions", "causes": causes}
    return ApiError(422, "Invalid", f'ListOptions.meta.k8s.io "" is invalid: {summary}', details)


def list_option_causes(query: Mapping[str, str], *, watch: bool) -> list[dict[str, Any]]:
    """apimachinery's ValidateListOptions (and validateWatchOptions), the WatchList gate on."""
    match = query.get("resourceVersionMatch", "")
    send_initial = query.get("sendInitialEvents")
    causes: list[dict[str, Any]] = []
    if watch:
        if send_initial is not None and match != "NotOlderThan":
            causes.append(forbidden_cause(
                "resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))  # fmt: skip
        if match:
            if send_initial is None:
                causes.append(forbidden_cause(
                    "resourceVersionMatch", "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))  # fmt: skip
            if match != "NotOlderThan":
                causes.append(not_supported_cause("resourceVersionMatch", match, ["NotOlderThan"]))
            if query.get("continue"):
                causes.append(forbidden_cause(
                    "resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))  # fmt: skip
        return causes
    if match:
        if not query.get("resourceVersion"):
            causes.append(forbidden_cause(
                "resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"))  # fmt: skip
        if query.get("continue"):
            causes.append(forbidden_cause(
                "resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))  # fmt: skip
        if match not in ("Exact", "NotOlderThan"):
            causes.append(not_supported_cause("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""]))
        if match == "Exact" and query.get("resourceVersion") == "0":
            causes.append(forbidden_cause(
                "resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))  # fmt: skip
    if send_initial is not None:
        causes.append(forbidden_cause("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    return causes


def resource_version_required(resource: ResourceDef, name: str) -> ApiError:
    """A PUT without metadata.resourceVersion to a kind whose strategy refuses unconditional updates.

    The registry words it with the resource as the kind (`devicetaintrules.resource.k8s.io`) and the
    version as the uint64 it parsed, which Go prints as 0x0.
    """
    cause = {
        "reason": "FieldValueInvalid",
        "message": "Invalid value: 0x0: must be specified for an update",
        "field": "metadata.resourceVersion",
    }
    details = _details(resource, name)
    details["causes"] = [cause]
    return ApiError(
        422,
        "Invalid",
        f'{resource.group_resource} "{name}" is invalid: metadata.resourceVersion: {cause["message"]}',
        details,
    )


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def expired(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def resource_not_found() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def method_not_allowed() -> ApiError:
    return ApiError(
        405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {}
    )
