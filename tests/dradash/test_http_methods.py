"""Every URL, every method, as a logged-in operator: no 5xx, and a write to anything that is not a form
handler or a writable API endpoint is a 405 (never a 200 from a read-only view)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from allocation.services import whatif_run_create
from dradash.tokens import api_token_create
from inventory.models import Claim, Device, KubeObject, Pod, Pool
from maintenance.planning import DeviceRef
from maintenance.services import Draft, maintenance_create
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db

WRITES = ("POST", "PUT", "PATCH", "DELETE")
#: routes that take a POST (forms and the writable API); every other write is refused with 405
POST_ROUTES = {
    "accounts/login/", "accounts/logout/", "accounts/tokens/", "accounts/tokens/<int:token_id>/revoke/", "accounts/tokens/legacy/revoke/",
    "whatif/", "whatif/<uuid:run_id>/cancel/", "maintenance/new/", "maintenance/<str:maintenance_id>/preview/",
    "maintenance/<str:maintenance_id>/apply/", "maintenance/<str:maintenance_id>/undo/", "migration/upgrade/",
    "^api/whatif/runs/$", "^api/whatif/runs/(?P<pk>[^/.]+)/cancel/$", "api/maintenance/",
    "api/maintenance/<str:maintenance_id>/preview/", "api/maintenance/<str:maintenance_id>/apply/",
    "api/maintenance/<str:maintenance_id>/undo/", "api/migration/upgrade/",
    "migration/pool-status/", "api/migration/pool-status/", "api/migration/pool-status/<str:name>/refresh/",
    # the drain's pause / resume / abort (issue 14), and removing the rules a failed enforce left
    *(f"{api}maintenance/<str:maintenance_id>/{action}/" for api in ("", "api/")
      for action in ("pause", "resume", "abort", "remove-leftovers")),
}  # fmt: skip
#: routes that take a DELETE (a one-shot object deleted to be made again)
DELETE_ROUTES = {"api/migration/pool-status/<str:name>/"}


def routes(patterns: list[Any], prefix: str = "") -> Iterator[str]:
    """Every route below the root, as one string of its parts (admin/ is Django's own and left out)."""
    for p in patterns:
        if isinstance(p, URLResolver):
            if str(p.pattern) != "admin/":
                yield from routes(p.url_patterns, prefix + str(p.pattern))
        elif isinstance(p, URLPattern):
            yield prefix + str(p.pattern)


def concrete(route: str, values: dict[str, Any]) -> str:
    """The route with each parameter replaced by the value of an object that exists."""
    path = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: str(values[m.group(1)]), route)
    path = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(values[m.group(1)]), path)
    return "/" + path.replace("^", "").replace("$", "")


@pytest.fixture
def operator() -> User:
    user = User.objects.create_user("olivia")
    user.groups.add(Group.objects.get_or_create(name="operator")[0])
    return user


@pytest.fixture
def values(operator: User) -> dict[str, Any]:
    f.write(
        ("deviceclasses", f.device_class("gpu.example.com")),
        ("nodes", f.node("node-0")),
        ("resourceslices", f.resource_slice("s", devices=[f.gpu("gpu-0"), f.gpu("gpu-1")])),
        ("devicetaintrules", f.taint_rule("r1", selector={"pool": "node-0"})),
        ("resourceclaims", f.claim("c1", results=[f.result("gpu-0")])),
        ("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": f.meta("p1", namespace="default"),
                  "spec": {"nodeName": "node-0", "containers": [{"name": "c"}]}, "status": {"phase": "Running"}}),
    )  # fmt: skip
    device = Device.objects.get(name="gpu-0")
    draft = Draft(
        title="t", reason="r", ticket="", key="example.com/m", value="", effect="NoSchedule",
        devices=[DeviceRef(device.driver, device.pool, device.name)], filters={},
    )  # fmt: skip
    maintenance = maintenance_create(user=operator, draft=draft)
    run = whatif_run_create(
        kind="headroom", input={"source": "class", "deviceClassName": "gpu.example.com"}, user=operator
    )
    rule = KubeObject.objects.get(kind="devicetaintrules")
    return {
        "driver": device.driver, "pool": device.pool, "name": device.name, "namespace": "default",
        "kind": "devicetaintrules", "uid": rule.uid, "maintenance_id": maintenance.pk, "run_id": run.pk,
        "token_id": api_token_create(user=operator, name="walk")[0].pk,
    }  # fmt: skip


def router_pks(values: dict[str, Any]) -> dict[str, Any]:
    """`pk` names a different object on each router: the one that exists there."""
    return {
        "api/^claims/": Claim.objects.get().pk, "api/^pools/": Pool.objects.get().pk,
        "api/^devices/": Device.objects.get(name="gpu-0").pk, "^api/whatif/": values["run_id"],
        "api/^classes/": "gpu.example.com", "api/^taint-rules/": "r1", "api/^nodes/": "node-0",
        "api/^pods/": Pod.objects.get().pk,
    }  # fmt: skip


def test_it_answers_every_method_on_every_route_without_a_server_error(
    operator: User, values: dict[str, Any]
) -> None:
    all_routes = sorted(set(routes(get_resolver().url_patterns)))
    assert len(all_routes) > 60 and set(all_routes) >= POST_ROUTES
    pks = router_pks(values)
    problems = []
    for route in all_routes:
        pk = next((v for prefix, v in pks.items() if route.startswith(prefix)), "")
        path = concrete(route, values | {"pk": pk})
        for method in ("GET", "HEAD", "OPTIONS", *WRITES):
            client = Client(raise_request_exception=False)
            client.force_login(operator)  # logout/ ends the session: every request starts logged in
            response = client.generic(method, path)
            if response.status_code >= 500:
                problems.append(f"{method} {path}: {response.status_code}")
            elif (
                method in WRITES
                and (route not in POST_ROUTES or method != "POST")
                and (route not in DELETE_ROUTES or method != "DELETE")
                and response.status_code != 405
            ):
                problems.append(f"{method} {path}: {response.status_code}, not 405")
    assert not problems, "\n".join(problems)


#: query parameters the pages and the API take somewhere, and some they take nowhere
QUERY_KEYS = (
    "q", "driver", "pool", "node", "state", "class", "attribute", "health", "taint", "allocation", "claim",
    "page", "page_size", "limit", "offset", "cursor", "ordering", "sort", "format", "namespace", "effect",
    "since", "before", "after", "maintenance", "actor", "action", "live", "fragment", "pods", "waiting",
    "uses_claims", "extended_resource", "phase", "kind", "name", "run", "fields", "nodee",
)  # fmt: skip
#: values a person, a script or an attacker sends
HOSTILE_VALUES = (
    "", " ", "'", '"<script>x</script>', "%", "%00", "\x00", "\u202eevil", "é", "../../etc", "a" * 5000,
    "-1", "0", "9" * 40, "1e309", "NaN", "true", "[]", "{}", "a,b,,", "gpu.example.com", "node-0", "\n",
)  # fmt: skip


def test_hostile_query_parameters_on_every_page_are_never_a_server_error(
    operator: User, values: dict[str, Any]
) -> None:
    """Each GET route once per parameter name above (its value taken in turn from the hostile ones), then 4
    times with 2 to 5 parameters drawn (seeded), repeated names included: a 4xx or a page, never a 5xx."""
    import random

    draw = random.Random(37)
    pks = router_pks(values)
    client = Client(raise_request_exception=False)
    client.force_login(operator)
    problems = []
    for i, route in enumerate(sorted(set(routes(get_resolver().url_patterns)))):
        if "logout" in route:
            continue
        pk = next((v for prefix, v in pks.items() if route.startswith(prefix)), "")
        path = concrete(route, values | {"pk": pk})
        queries = [[(key, HOSTILE_VALUES[(i + j) % len(HOSTILE_VALUES)])] for j, key in enumerate(QUERY_KEYS)]
        queries += [
            [(draw.choice(QUERY_KEYS), draw.choice(HOSTILE_VALUES)) for _ in range(draw.randint(2, 5))]
            for _ in range(4)
        ]
        for query in queries:
            response = client.get(path, query)
            if response.status_code >= 500:
                problems.append(f"GET {path} {query!r:.200}: {response.status_code}")
    assert not problems, "\n".join(problems[:40])
