"""Upstream's TestValidateClaim table (validation_resourceclaim_test.go, stored version 045b4933) and its
TestValidateClaimTemplate table (validation_resourceclaimtemplate_test.go, stored version 030880a5), case by
case through a running simcluster; the template update table through `validate`.

Left out or changed: resource-version (see `metadata_cases`); missing-namespace (a namespaced create without
a namespace has no URL); in "configuration", entries 0 and 1 (parameters `` and `{` are not JSON, which no JSON
body can carry) and entry 5 (10 KiB + 1 as upstream spells it: see the DeviceClass table's note); the status
update table (TestValidateClaimStatusUpdate) is not ported yet. invalid-request and invalid-spec are left out:
this stored version predates distinctAttribute (1.34) and words the constraint errors as no 1.37 server does.
prioritized-list-invalid-nested-request: a create is defaulted first (allocationMode ExactCount, count 1),
so the NotSupported("") upstream's table gets from calling validation directly cannot happen. CEL-compile-errors
is a known difference: simcluster's CEL environment types `device` as map(string, dyn), so
`device.attributes[true].someBoolean` compiles, where upstream's typed environment reports "found no matching
overload for '_[_]' applied to '(map(string, map(string, any)), bool)'". Duplicate request and subrequest
names are reported at the list entry (requests[5], not requests[5].name), as the newer validation.go's
validateSet and the ResourceSlice table (sharedCounters[1]) do; this older table names the field."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from simcluster.validation import validate
from tests.simcluster.upstream_validation import (
    ANY,
    BAD_NAME,
    DNS_LABEL,
    SUBDOMAIN,
    Case,
    Cause,
    assert_answers,
    duplicate,
    forbidden,
    invalid,
    metadata_cases,
    not_supported,
    required,
    same_causes,
    too_long,
    too_many,
)
from tests.simcluster.validation_samples import CLAIM, TEMPLATE, Obj

C_IDENTIFIER = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
    "characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is "
    "'[A-Za-z_][A-Za-z0-9_]*')"
)
NOT_A_REQUEST = (
    "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
)
MODES = ["All", "ExactCount"]
REQUESTS = "spec.devices.requests"
CONSTRAINTS = "spec.devices.constraints"
CONFIG = "spec.devices.config"
PARAMETERS = {"kind": "foo", "apiVersion": "dra.example.com/v1"}
CONFIG_ENTRY = {"opaque": {"driver": "dra.example.com", "parameters": PARAMETERS}}
COSTLY = (
    "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, 3, 4, 5, 6, 7, 8, 9, "
    "10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, "
    "6, 7, 8, 9, 10].all(z4, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))"
)
SHORT = 'device.driver == ""'


def exact(name: str = "foo", **extra: Any) -> Obj:
    return {
        "name": name,
        "exactly": {"deviceClassName": "foo", "allocationMode": "ExactCount", "count": 1, **extra},
    }


def sub(name: str) -> Obj:
    return {"name": name, "deviceClassName": "foo", "allocationMode": "ExactCount", "count": 1}


def claim_spec(first_available: bool = False) -> Obj:
    if first_available:
        return {"devices": {"requests": [{"name": "foo", "firstAvailable": [sub("foo"), sub("bar")]}]}}
    return {"devices": {"requests": [exact()]}}


def a_claim(name: str = "foo", first_available: bool = False) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": claim_spec(first_available),
    }


def devices(obj: Obj) -> Obj:
    found: Obj = obj["spec"]["devices"]
    return found


def edited(base: Callable[[], Obj], *edits: Callable[[Obj], Any]) -> Callable[[], Obj]:
    def build() -> Obj:
        obj = base()
        for edit in edits:
            edit(devices(obj))
        return obj

    return build


def put(**values: Any) -> Callable[[Obj], None]:
    def edit(spec_devices: Obj) -> None:
        spec_devices.update(copy.deepcopy(values))

    return edit


def first_request(**values: Any) -> Callable[[Obj], None]:
    def edit(spec_devices: Obj) -> None:
        spec_devices["requests"][0].update(copy.deepcopy(values))

    return edit


def allocation_modes(spec_devices: Obj) -> None:
    requests = [exact(), exact("foo2"), exact("foo3"), exact("foo4"), exact("foo5"), exact()]
    requests[1]["exactly"].update(allocationMode="All", count=0)
    requests[2]["exactly"]["count"] = -1
    requests[3]["exactly"]["allocationMode"] = "other"
    requests[4]["exactly"].update(allocationMode="All", count=2)
    spec_devices["requests"] = requests


def selectors(*expressions: str, request: int = 1) -> Callable[[Obj], None]:
    def edit(spec_devices: Obj) -> None:
        while len(spec_devices["requests"]) <= request:
            spec_devices["requests"].append(exact("foo-2"))
        spec_devices["requests"][request]["exactly"]["selectors"] = [
            {"cel": {"expression": e}} for e in expressions
        ]

    return edit


def padded(length: int) -> str:
    return SHORT.replace('""', '"' + "x" * (length - len(SHORT)) + '"')


CLAIM_CASES = [
    *metadata_cases("good-claim", a_claim),
    Case(
        "bad-classname",
        edited(a_claim, lambda d: d["requests"][0]["exactly"].update(deviceClassName=BAD_NAME)),
        [invalid(f"{REQUESTS}[0].exactly.deviceClassName", BAD_NAME, SUBDOMAIN)],
    ),
    Case(
        "missing-classname",
        edited(a_claim, lambda d: d["requests"][0]["exactly"].update(deviceClassName="")),
        [required(f"{REQUESTS}[0].exactly.deviceClassName")],
    ),
    Case(
        "valid-request",
        edited(
            a_claim,
            put(
                constraints=[{"matchAttribute": "foo/bar"}] * 32,
                config=[CONFIG_ENTRY] * 32,
                requests=[exact()] + [exact(f"foo{i}") for i in range(1, 32)],
            ),
        ),
    ),
    # The parts of upstream's invalid-spec and invalid-request that do not depend on the constraint wording:
    Case(
        "invalid-spec-request-references",
        edited(
            a_claim,
            put(
                constraints=[{"requests": ["foo", BAD_NAME], "matchAttribute": "dra.example.com/x"}],
                config=[{"requests": ["foo", BAD_NAME], **CONFIG_ENTRY}],
            ),
        ),
        [
            invalid(f"{CONSTRAINTS}[0].requests[1]", BAD_NAME, DNS_LABEL),
            invalid(f"{CONSTRAINTS}[0].requests[1]", BAD_NAME, NOT_A_REQUEST),
            invalid(f"{CONFIG}[0].requests[1]", BAD_NAME, DNS_LABEL),
            invalid(f"{CONFIG}[0].requests[1]", BAD_NAME, NOT_A_REQUEST),
        ],
    ),
    Case(
        "invalid-request-limits",
        edited(
            a_claim,
            put(
                constraints=[{"matchAttribute": "foo/bar"}] * 33,
                config=[CONFIG_ENTRY] * 33,
                requests=[exact()] + [exact(f"foo{i}") for i in range(1, 33)],
            ),
        ),
        [too_many(REQUESTS, 33, 32), too_many(CONSTRAINTS, 33, 32), too_many(CONFIG, 33, 32)],
    ),
    Case(
        "allocation-mode",
        edited(a_claim, allocation_modes),
        [
            invalid(f"{REQUESTS}[2].exactly.count", -1, "must be greater than zero"),
            not_supported(f"{REQUESTS}[3].exactly.allocationMode", "other", MODES),
            invalid(f"{REQUESTS}[4].exactly.count", 2, "must not be specified when allocationMode is 'All'"),
            duplicate(f"{REQUESTS}[5]", "foo"),
        ],
    ),
    Case(
        "configuration",
        edited(
            a_claim,
            put(
                config=[
                    {"opaque": {"driver": "dra.example.com", "parameters": "hello-world"}},
                    {"opaque": {"driver": "dra.example.com", "parameters": None}},
                    {
                        "opaque": {
                            "driver": "dra.example.com",
                            "parameters": {"str": "x" * (10 * 1024 - 9 - 2)},
                        }
                    },
                ]
            ),
        ),
        [
            invalid(f"{CONFIG}[0].opaque.parameters", "<value omitted>", "must be a valid JSON object"),
            required(f"{CONFIG}[1].opaque.parameters"),
        ],
    ),
    Case(
        "CEL-length",
        edited(a_claim, selectors(padded(10 * 1024), padded(10 * 1024 + 1))),
        [too_long(f"{REQUESTS}[1].exactly.selectors[1].cel.expression", 10 * 1024)],
    ),
    Case(
        "CEL-cost",
        edited(a_claim, selectors(COSTLY, request=0)),
        [forbidden(f"{REQUESTS}[0].exactly.selectors[0].cel.expression", "too complex, exceeds cost limit")],
    ),
    Case("prioritized-list-valid", lambda: a_claim(first_available=True)),
    Case(
        "prioritized-list-both-first-available-and-exactly-set",
        edited(
            lambda: a_claim(first_available=True),
            first_request(
                exactly={
                    "deviceClassName": "foo",
                    "selectors": [{"cel": {"expression": 'device.driver == "dra.example.com"'}}],
                    "allocationMode": "ExactCount",
                    "count": 2,
                    "adminAccess": True,
                }
            ),
        ),
        [
            invalid(
                f"{REQUESTS}[0]",
                None,
                "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
            )
        ],
    ),
    Case(
        "prioritized-list-invalid-nested-request",
        edited(
            lambda: a_claim(first_available=True),
            lambda d: d["requests"][0]["firstAvailable"].__setitem__(0, {"name": BAD_NAME}),
        ),
        [
            invalid(f"{REQUESTS}[0].firstAvailable[0].name", BAD_NAME, DNS_LABEL),
            required(f"{REQUESTS}[0].firstAvailable[0].deviceClassName"),
        ],
    ),
    Case(
        "prioritized-list-nested-requests-same-name",
        edited(
            lambda: a_claim(first_available=True),
            lambda d: d["requests"][0]["firstAvailable"][1].update(name="foo"),
        ),
        [duplicate(f"{REQUESTS}[0].firstAvailable[1]", "foo")],
    ),
    Case(
        "prioritized-list-too-many-subrequests",
        edited(
            a_claim, put(requests=[{"name": "foo", "firstAvailable": [sub(f"subreq-{i}") for i in range(9)]}])
        ),
        [too_many(f"{REQUESTS}[0].firstAvailable", 9, 8)],
    ),
    *(
        Case(
            f"prioritized-list-{what}-requests-with-{kind}-reference",
            edited(lambda: a_claim(first_available=True), put(**{field: [{"requests": [ref], **entry}]})),
            []
            if kind != "invalid-subrequest"
            else [invalid(f"spec.devices.{field}[0].requests[0]", ref, NOT_A_REQUEST)],
        )
        for what, field, entry in (
            ("config", "config", CONFIG_ENTRY),
            ("constraints", "constraints", {"matchAttribute": "dra.example.com/driverVersion"}),
        )
        for kind, ref in (
            ("subrequest", "foo/bar"),
            ("parent-request", "foo"),
            ("invalid-subrequest", "foo/baz"),
        )
    ),
]


@pytest.mark.parametrize("case", CLAIM_CASES, ids=lambda c: c.name)
def test_it_answers_upstreams_resource_claim_table(shared_api: client.ApiClient, case: Case) -> None:
    assert_answers(shared_api, CLAIM, case)


def a_template(name: str = "foo", first_available: bool = False) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"spec": claim_spec(first_available)},
    }


def template_request(obj: Obj) -> Obj:
    found: Obj = obj["spec"]["spec"]["devices"]["requests"][0]
    return found


def template_edit(first_available: bool, edit: Callable[[Obj], Any]) -> Callable[[], Obj]:
    def build() -> Obj:
        obj = a_template(first_available=first_available)
        edit(template_request(obj))
        return obj

    return build


T_REQUESTS = "spec.spec.devices.requests"
TEMPLATE_CASES = [
    *metadata_cases("good-claim", a_template),
    Case(
        "bad-classname",
        template_edit(False, lambda r: r["exactly"].update(deviceClassName=BAD_NAME)),
        [invalid(f"{T_REQUESTS}[0].exactly.deviceClassName", BAD_NAME, SUBDOMAIN)],
    ),
    Case("prioritized-list", lambda: a_template(first_available=True)),
    Case(
        "prioritized-list-both-first-available-and-exactly-set",
        template_edit(True, lambda r: r.update(exactly={"deviceClassName": "foo", "allocationMode": "All"})),
        [
            invalid(
                f"{T_REQUESTS}[0]",
                None,
                "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
            )
        ],
    ),
    Case(
        "prioritized-list-bad-class-name-on-subrequest",
        template_edit(True, lambda r: r["firstAvailable"][0].update(deviceClassName=BAD_NAME)),
        [invalid(f"{T_REQUESTS}[0].firstAvailable[0].deviceClassName", BAD_NAME, SUBDOMAIN)],
    ),
]


@pytest.mark.parametrize("case", TEMPLATE_CASES, ids=lambda c: c.name)
def test_it_answers_upstreams_resource_claim_template_table(shared_api: client.ApiClient, case: Case) -> None:
    assert_answers(shared_api, TEMPLATE, case)


def renamed_class(first_available: bool) -> Callable[[Obj], Obj]:
    def update(obj: Obj) -> Obj:
        request = template_request(obj)
        target = request["firstAvailable"][0] if first_available else request["exactly"]
        target["deviceClassName"] += "2"
        return obj

    return update


TEMPLATE_UPDATES: list[tuple[str, Obj, Callable[[Obj], Obj], list[Cause]]] = [
    ("valid-no-op-update", a_template(), lambda t: t, []),
    (
        "invalid-update-class",
        a_template(),
        renamed_class(False),
        [invalid("spec", None, "field is immutable")],
    ),
    (
        "prioritized-listinvalid-update-class",
        a_template(first_available=True),
        renamed_class(True),
        [invalid("spec", None, "field is immutable")],
    ),
]


@pytest.mark.parametrize(
    ("name", "old", "update", "want"), TEMPLATE_UPDATES, ids=[u[0] for u in TEMPLATE_UPDATES]
)
def test_it_answers_upstreams_resource_claim_template_update_table(
    name: str, old: Obj, update: Callable[[Obj], Obj], want: list[Cause]
) -> None:
    old = {**old, "metadata": {**old["metadata"], "resourceVersion": "1"}}
    causes, _ = validate(TEMPLATE, update(copy.deepcopy(old)), old)
    got = [(c["field"], c["reason"], c["message"]) for c in causes]
    # upstream shows the whole spec (Go %#v) as the value; only field, reason and rule are compared
    assert [(f, r, m.rsplit(": ", 1)[-1]) for f, r, m in got] == [
        (f, r, m.rsplit(": ", 1)[-1]) for f, r, m in want
    ]


# TestValidateClaimStatusUpdate (same stored version), through `validate` on the status subresource.
# Left out: the "-disabled-feature-gate" variants (DRAResourceClaimDeviceStatus is GA and locked on in 1.37),
# invalid-data-device-status (data that is not JSON), valid-configuration-update (10 KiB + 1 as upstream spells
# it, see above); in "configuration" entry 6 for the same reason, and an empty driver is only Required, as the
# newer DeviceClass table has it (this older table also expects the subdomain message for "").
# invalid-data-device-status-limits uses 10 KiB + 2 of data, too long however it is spelt. Where the newer
# validation.go (validateSet keyed without a field, IsValidInterfaceAddress) words an error differently from
# this older table, the newer words are expected: duplicates at the list entry (reservedFor[1], devices[1]),
# "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)", canonical forms quoted.


def allocated(claim: Obj, **result: Any) -> Obj:
    claim["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {
                        "request": "foo",
                        "driver": "foo",
                        "pool": "foo",
                        "device": "foo",
                        "adminAccess": False,
                        **result,
                    }
                ]
            }
        }
    }
    return claim


def reservations(count: int, *, uid: str | None = None) -> list[Obj]:
    return [{"resource": "pods", "name": f"foo-{i}", "uid": uid or str(i)} for i in range(count)]


def status(**values: Any) -> Callable[[Obj], Obj]:
    def update(claim: Obj) -> Obj:
        claim.setdefault("status", {}).update(copy.deepcopy(values))
        return claim

    return update


def allocation_config(*entries: Obj) -> Callable[[Obj], Obj]:
    def update(claim: Obj) -> Obj:
        claim = allocated(claim)
        claim["status"]["allocation"]["devices"]["config"] = copy.deepcopy(list(entries))
        return claim

    return update


def device_status(*entries: Obj) -> Callable[[Obj], Obj]:
    return status(devices=list(entries))


def foo_device(**values: Any) -> Obj:
    return {"driver": "foo", "pool": "foo", "device": "foo", **values}


def conditions(count: int) -> list[Obj]:
    return [
        {
            "type": f"test-{i}",
            "status": "True",
            "reason": "test_reason",
            "message": "",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
        for i in range(count)
    ]


def deleted(claim: Obj) -> Obj:
    claim["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return claim


def driver_changed(claim: Obj) -> Obj:
    claim["status"]["allocation"]["devices"]["results"][0]["driver"] += "-2"
    return claim


STATUS = "status"
RESERVED = "status.reservedFor"
ALLOC_CONFIG = "status.allocation.devices.config"
DEVICES_STATUS = "status.devices"
CLAIM_CONFIG = {"source": "FromClaim", **CONFIG_ENTRY}
IPS_16 = ["10.9.8.0/24", "2001:db8::/64", "10.9.8.1/24", "2001:db8::1/64"] + [
    f"10.9.8.{i}/24" for i in range(2, 14)
]

STATUS_UPDATES: list[tuple[str, Obj, Callable[[Obj], Obj], list[Cause]]] = [
    ("valid-no-op-update", a_claim(), lambda c: c, []),
    ("valid-add-allocation-empty", a_claim(), status(allocation={}), []),
    ("valid-add-allocation-non-empty", a_claim(), allocated, []),
    (
        "invalid-add-allocation-bad-request",
        a_claim(),
        lambda c: allocated(c, request=BAD_NAME),
        [
            invalid("status.allocation.devices.results[0].request", BAD_NAME, DNS_LABEL),
            invalid("status.allocation.devices.results[0].request", BAD_NAME, NOT_A_REQUEST),
        ],
    ),
    ("okay-add-allocation-missing-admin-access", a_claim(), lambda c: allocated(c, adminAccess=None), []),
    (
        "invalid-node-selector",
        a_claim(),
        status(allocation={"nodeSelector": {}}),
        [
            required(
                "status.allocation.nodeSelector.nodeSelectorTerms",
                "must have at least one node selector term",
            )
        ],
    ),
    ("add-reservation", allocated(a_claim()), status(reservedFor=reservations(256)), []),
    (
        "add-reservation-and-allocation",
        a_claim(),
        lambda c: status(reservedFor=reservations(256))(allocated(c)),
        [],
    ),
    (
        "invalid-reserved-for-too-large",
        allocated(a_claim()),
        status(reservedFor=reservations(257)),
        [too_many(RESERVED, 257, 256)],
    ),
    (
        "invalid-reserved-for-duplicate",
        allocated(a_claim()),
        status(reservedFor=[{"resource": "pods", "name": "foo", "uid": "1"}] * 2),
        [duplicate(f"{RESERVED}[1]", "1")],
    ),
    (
        "invalid-reserved-for-no-allocation",
        a_claim(),
        status(reservedFor=[{"resource": "pods", "name": "foo", "uid": "1"}]),
        [forbidden(RESERVED, "may not be specified when `allocated` is not set")],
    ),
    *(
        (
            f"invalid-reserved-for-no-{missing}",
            allocated(a_claim()),
            status(
                reservedFor=[
                    {k: v for k, v in {"resource": "pods", "name": "foo", "uid": "1"}.items() if k != missing}
                ]
            ),
            [required(f"{RESERVED}[0].{missing}")],
        )
        for missing in ("resource", "name", "uid")
    ),
    (
        "invalid-reserved-deleted",
        deleted(allocated(a_claim())),
        status(reservedFor=[{"resource": "pods", "name": "foo", "uid": "1"}]),
        [
            forbidden(
                RESERVED,
                "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set",
            )
        ],
    ),
    (
        "invalid-allocation-modification",
        allocated(a_claim()),
        driver_changed,
        [invalid("status.allocation", ANY, "field is immutable")],
    ),
    (
        "invalid-request-name",
        a_claim(),
        allocation_config({"requests": ["foo", BAD_NAME], **CLAIM_CONFIG}),
        [
            invalid(f"{ALLOC_CONFIG}[0].requests[1]", BAD_NAME, DNS_LABEL),
            invalid(f"{ALLOC_CONFIG}[0].requests[1]", BAD_NAME, NOT_A_REQUEST),
        ],
    ),
    (
        "configuration",
        a_claim(),
        allocation_config(
            CLAIM_CONFIG,
            {"source": "", **CONFIG_ENTRY},
            {"source": "no-such-source", **CONFIG_ENTRY},
            {"source": "FromClaim"},
            {"source": "FromClaim", "opaque": {}},
            {
                "source": "FromClaim",
                "opaque": {"driver": "foo", "parameters": {"str": "x" * (10 * 1024 - 11)}},
            },
        ),
        [
            required(f"{ALLOC_CONFIG}[1].source"),
            not_supported(f"{ALLOC_CONFIG}[2].source", "no-such-source", ["FromClaim", "FromClass"]),
            required(f"{ALLOC_CONFIG}[3].opaque"),
            required(f"{ALLOC_CONFIG}[4].opaque.driver"),
            required(f"{ALLOC_CONFIG}[4].opaque.parameters"),
        ],
    ),
    (
        "valid-network-device-status",
        allocated(a_claim()),
        device_status(
            foo_device(
                conditions=conditions(8),
                data=PARAMETERS,
                networkData={"interfaceName": "x" * 256, "hardwareAddress": "x" * 128, "ips": IPS_16},
            )
        ),
        [],
    ),
    (
        "invalid-device-status-duplicate",
        allocated(a_claim()),
        device_status(foo_device(networkData={"ips": ["2001:db8::1/64"] * 2}), foo_device()),
        [
            duplicate(f"{DEVICES_STATUS}[0].networkData.ips[1]", "2001:db8::1/64"),
            duplicate(f"{DEVICES_STATUS}[1]", "foo/foo/foo"),
        ],
    ),
    (
        "invalid-network-device-status",
        allocated(a_claim()),
        device_status(
            foo_device(
                networkData={
                    "interfaceName": "x" * 257,
                    "hardwareAddress": "x" * 129,
                    "ips": ["300.9.8.0/24", "010.009.008.000/24", "2001:0db8::1/64"],
                }
            )
        ),
        [
            too_long(f"{DEVICES_STATUS}[0].networkData.interfaceName", 256),
            too_long(f"{DEVICES_STATUS}[0].networkData.hardwareAddress", 128),
            invalid(
                f"{DEVICES_STATUS}[0].networkData.ips[0]",
                "300.9.8.0/24",
                "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)",
            ),
            invalid(
                f"{DEVICES_STATUS}[0].networkData.ips[1]",
                "010.009.008.000/24",
                'must be in canonical form ("10.9.8.0/24")',
            ),
            invalid(
                f"{DEVICES_STATUS}[0].networkData.ips[2]",
                "2001:0db8::1/64",
                'must be in canonical form ("2001:db8::1/64")',
            ),
        ],
    ),
    (
        "invalid-data-device-status-limits",
        allocated(a_claim()),
        device_status(
            foo_device(
                data={"str": "x" * (10 * 1024 - 9)},
                conditions=conditions(9),
                networkData={"ips": [f"10.9.8.{i}/24" for i in range(17)]},
            )
        ),
        [
            too_many(f"{DEVICES_STATUS}[0].conditions", 9, 8),
            too_long(f"{DEVICES_STATUS}[0].data", 10 * 1024),
            too_many(f"{DEVICES_STATUS}[0].networkData.ips", 17, 16),
        ],
    ),
    (
        "invalid-device-status-no-device",
        allocated(a_claim()),
        device_status({"driver": "b", "pool": "a", "device": "r"}),
        [invalid(f"{DEVICES_STATUS}[0]", "b/a/r", "must be an allocated device in the claim")],
    ),
]


@pytest.mark.parametrize(
    ("name", "old", "update", "want"), STATUS_UPDATES, ids=[u[0] for u in STATUS_UPDATES]
)
def test_it_answers_upstreams_resource_claim_status_update_table(
    name: str, old: Obj, update: Callable[[Obj], Obj], want: list[Cause]
) -> None:
    old = {**copy.deepcopy(old), "metadata": {**old["metadata"], "resourceVersion": "1"}}
    causes, _ = validate(CLAIM, update(copy.deepcopy(old)), old, subresource="status")
    got = [(c["field"], c["reason"], c["message"]) for c in causes]
    assert same_causes(want, got), got
