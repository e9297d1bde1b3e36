"""Machinery for upstream's validation tables (kubernetes/kubernetes
``pkg/apis/resource/validation/validation_*_test.go``) ported case by case: each case is an object and the
complete list of errors upstream's validation answers for it, and the test sends the object to a running
simcluster through the official client (``dryRun=All``, so cases never collide) and compares the causes of
its 422 ``Status`` with that list. (Not a test module.)"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubernetes import client

from tests.simcluster.validation_samples import Kind, Obj

#: (field path, reason, message) as in a Status cause
Cause = tuple[str, str, str]


def quoted(value: Any) -> str:
    """How field.Invalid / field.Duplicate show a value (Go's %#v of a string or number)."""
    return (
        json.dumps(value)
        if isinstance(value, str)
        else str(value).lower()
        if isinstance(value, bool)
        else str(value)
    )


def invalid(path: str, value: Any, detail: str) -> Cause:
    return (path, "FieldValueInvalid", f"Invalid value: {quoted(value)}: {detail}")


def required(path: str, detail: str = "") -> Cause:
    return (path, "FieldValueRequired", "Required value" + (f": {detail}" if detail else ""))


def forbidden(path: str, detail: str) -> Cause:
    return (path, "FieldValueForbidden", f"Forbidden: {detail}")


def duplicate(path: str, value: Any) -> Cause:
    return (path, "FieldValueDuplicate", f"Duplicate value: {quoted(value)}")


def too_many(path: str, actual: int, limit: int) -> Cause:
    return (path, "FieldValueTooMany", f"Too many: {actual}: must have at most {limit} items")


def too_long(path: str, limit: int) -> Cause:
    return (path, "FieldValueTooLong", f"Too long: may not be more than {limit} bytes")


def not_supported(path: str, value: Any, supported: list[str]) -> Cause:
    listed = ", ".join(json.dumps(v) for v in supported)
    return (path, "FieldValueNotSupported", f"Unsupported value: {quoted(value)}: supported values: {listed}")


@dataclass(frozen=True)
class Case:
    """One upstream case: ``build`` returns the object; ``want`` is every error upstream reports."""

    name: str
    build: Callable[[], Obj]
    want: list[Cause] = field(default_factory=list)


def answer(api: client.ApiClient, kind: Kind, obj: Obj) -> list[Cause]:
    """The causes simcluster answers for creating ``obj`` (dry run); [] when it accepts it."""
    body = copy.deepcopy(obj)
    namespace = (body.get("metadata") or {}).get("namespace") if kind.namespaced else None
    prefix = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
    path = prefix + (f"/namespaces/{namespace}" if namespace else "") + f"/{kind.plural}"
    if namespace:  # the case's namespace must exist, as for kube-apiserver
        _post(api, "/api/v1/namespaces", {"metadata": {"name": namespace}}, dry_run=False)
    response = _post(api, path, body, dry_run=True)
    if response.status != 201:
        status = json.loads(response.data)
        assert response.status == 422, status
        return [(c.get("field", ""), c["reason"], c["message"]) for c in status["details"]["causes"]]
    return []


def _post(api: client.ApiClient, path: str, body: Obj, *, dry_run: bool) -> Any:
    method, url, headers, data, _ = api.param_serialize(
        "POST",
        path,
        query_params=[("dryRun", "All")] if dry_run else [],
        header_params={"Content-Type": "application/json", "Accept": "application/json"},
        body=body,
        auth_settings=["BearerToken"],
    )
    response = api.call_api(method, url, header_params=headers, body=data)
    response.read()
    return response


def assert_answers(api: client.ApiClient, kind: Kind, case: Case) -> None:
    got = answer(api, kind, case.build())
    assert sorted(got) == sorted(case.want), f"{case.name}: got {got}"
