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


#: a value upstream shows with Go's %#v of a struct or slice, which the comparison skips
ANY: Any = object()
_ANY_MARK = "\x00any\x00"


def quoted(value: Any) -> str:
    """How field.Invalid / field.Duplicate show a value (Go's %#v of a string or number)."""
    if value is None:
        return "null"  # field.Error shows a nil value as null (apimachinery 1.35+)
    return (
        json.dumps(value)
        if isinstance(value, str)
        else str(value).lower()
        if isinstance(value, bool)
        else str(value)
    )


def invalid(path: str, value: Any, detail: str) -> Cause:
    shown = _ANY_MARK if value is ANY else quoted(value)
    return (path, "FieldValueInvalid", f"Invalid value: {shown}: {detail}")


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


SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
BAD_NAME = "!@#$%^"
UID = "ac051fac-2ead-46d9-b8b4-4e0fbeb7455d"


@dataclass(frozen=True)
class Case:
    """One upstream case: ``build`` returns the object; ``want`` is every error upstream reports."""

    name: str
    build: Callable[[], Obj]
    want: list[Cause] = field(default_factory=list)


def metadata_cases(good: str, build: Callable[[str], Obj], name: str = "foo") -> list[Case]:
    """The ObjectMeta cases every upstream table of a kind repeats (resource-version left out: a create with
    a resourceVersion is refused by storage before validation), ``good`` naming the first."""

    def with_meta(**meta: Any) -> Callable[[], Obj]:
        def made() -> Obj:
            obj = build(name)
            obj["metadata"].update(meta)
            return obj

        return made

    def named(value: str) -> Callable[[], Obj]:
        def made() -> Obj:
            obj = build(value)
            if not value:
                obj["metadata"].pop("name", None)
            return obj

        return made

    return [
        Case(good, with_meta()),
        Case("missing-name", named(""), [required("metadata.name", "name or generateName is required")]),
        Case("bad-name", named(BAD_NAME), [invalid("metadata.name", BAD_NAME, SUBDOMAIN)]),
        Case("generate-name", with_meta(generateName="pvc-")),
        Case("uid", with_meta(uid=UID)),
        Case("generation", with_meta(generation=100)),
        Case("creation-timestamp", with_meta(creationTimestamp="2026-01-01T00:00:00Z")),
        Case("deletion-grace-period-seconds", with_meta(deletionGracePeriodSeconds=10)),
        Case(
            "owner-references",
            with_meta(ownerReferences=[{"apiVersion": "v1", "kind": "pod", "name": "foo", "uid": UID}]),
        ),
        Case("finalizers", with_meta(finalizers=["example.com/foo"])),
        Case(
            "managed-fields",
            with_meta(
                managedFields=[
                    {
                        "fieldsType": "FieldsV1",
                        "operation": "Apply",
                        "apiVersion": "apps/v1",
                        "manager": "foo",
                    }
                ]
            ),
        ),
        Case("good-labels", with_meta(labels={"apps.kubernetes.io/name": "test"})),
        Case(
            "bad-labels",
            with_meta(labels={"hello-world": "spaces not allowed"}),
            [invalid("metadata.labels", "spaces not allowed", LABEL_VALUE)],
        ),
        Case("good-annotations", with_meta(annotations={"foo": "bar"})),
        Case(
            "bad-annotations",
            with_meta(annotations={BAD_NAME: "hello world"}),
            [invalid("metadata.annotations", BAD_NAME, NAME_PART)],
        ),
    ]


def answer(api: client.ApiClient, kind: Kind, obj: Obj) -> list[Cause]:
    """The causes simcluster answers for creating ``obj`` (dry run); [] when it accepts it."""
    body = copy.deepcopy(obj)
    namespace = (body.get("metadata") or {}).get("namespace") if kind.namespaced else None
    prefix = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
    path = prefix + (f"/namespaces/{namespace}" if namespace else "") + f"/{kind.plural}"
    if namespace:  # the case's namespace must exist, as for kube-apiserver
        # labelled for DRA admin access: upstream's tables call the validation alone, not the registry's
        # namespace check of admin access (test_api_kubectl_dra covers that)
        labels = {"resource.kubernetes.io/admin-access": "true"}
        _post(api, "/api/v1/namespaces", {"metadata": {"name": namespace, "labels": labels}}, dry_run=False)
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


def _matches(want: Cause, got: Cause) -> bool:
    if want[:2] != got[:2]:
        return False
    if _ANY_MARK not in want[2]:
        return want[2] == got[2]
    head, tail = want[2].split(_ANY_MARK)
    return got[2].startswith(head) and got[2].endswith(tail)


def same_causes(want: list[Cause], got: list[Cause]) -> bool:
    """Whether ``got`` is ``want`` in any order (a value shown as ANY matches any value)."""
    left = list(got)
    for expected in sorted(want, key=lambda w: _ANY_MARK in w[2]):
        found = next((g for g in left if _matches(expected, g)), None)
        if found is None:
            return False
        left.remove(found)
    return not left


def assert_answers(api: client.ApiClient, kind: Kind, case: Case) -> None:
    got = answer(api, kind, case.build())
    assert same_causes(case.want, got), f"{case.name}: got {got}"
