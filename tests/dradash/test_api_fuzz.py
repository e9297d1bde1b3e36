"""schemathesis over the whole OpenAPI schema, in process, against a database mirrored from simcluster.

Every operation gets generated requests — valid ones (positive) and ones that break the schema
(negative) — as an operator's token. The promise: no 5xx from any input, and answers that conform to
the schema (status codes, content types, bodies). Bounded: DRADASH_FUZZ_EXAMPLES cases per operation
and mode (default 12), so the suite stays around a minute; raise it for a deeper run.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.contrib.auth.models import Group, User
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from allocation.services import whatif_run_create
from dradash.tokens import api_token_create
from inventory.models import Claim, Device, KubeObject, Pod, Pool
from maintenance.planning import DeviceRef
from maintenance.services import Draft, maintenance_create
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db

EXAMPLES = int(os.environ.get("DRADASH_FUZZ_EXAMPLES", "12"))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture
def mirrored(simcluster: Any, settings: Any) -> Any:
    from inventory.kube import connect
    from inventory.mirror.runner import Mirror

    settings.DRADASH_KUBECONFIG = str(simcluster.kubeconfig_path)
    settings.DRADASH_KUBE_CONTEXT = ""
    Mirror(connect(str(simcluster.kubeconfig_path))).sync_once()
    return simcluster


@pytest.fixture
def wsgi_app() -> Iterator[WSGIHandler]:
    # As django.test.Client does: a request must not close the test's connection (and its transaction).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield WSGIHandler()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def openapi_schema() -> dict[str, Any]:
    """The schema from drf-spectacular's generator (the endpoint itself refuses anonymous callers)."""
    generated = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(generated, renderer_context={}))


def known_objects(operator: User) -> dict[str, dict[str, Any]]:
    """Path and query parameters naming objects that exist, per operation path: half of the generated
    cases use them, so the handlers run past their 404s."""
    f.write(("devicetaintrules", f.taint_rule("fuzz-rule", selector={"driver": "gpu.example.com"})))
    device = Device.objects.order_by("id").first()
    claim = Claim.objects.order_by("id").first()
    pool = Pool.objects.order_by("id").first()
    pod = KubeObject.objects.filter(kind="pods").order_by("id").first()
    pod_row = Pod.objects.order_by("id").first()
    node = KubeObject.objects.filter(kind="nodes").order_by("id").first()
    klass = KubeObject.objects.filter(kind="deviceclasses").order_by("id").first()
    assert device and claim and pool and pod and pod_row and node and klass, (
        "the tiny topology has lost its objects"
    )
    draft = Draft(
        title="fuzz", reason="fuzz", ticket="", key="example.com/fuzz", value="", effect="NoSchedule",
        devices=[DeviceRef(device.driver, device.pool, device.name)], filters={},
    )  # fmt: skip
    maintenance = maintenance_create(user=operator, draft=draft)
    run = whatif_run_create(
        kind="headroom", input={"source": "class", "deviceClassName": klass.name}, user=operator
    )
    return {
        "/api/claims/{id}/": {"id": claim.pk},
        "/api/classes/{id}/": {"id": klass.name},
        "/api/devices/{id}/": {"id": device.pk},
        "/api/devices/{driver}/{pool}/{name}/": {"driver": device.driver, "pool": device.pool, "name": device.name},
        "/api/devices/by-name/": {"driver": device.driver, "pool": device.pool, "device": device.name},
        "/api/nodes/{id}/": {"id": node.name},
        "/api/objects/{uid}/": {"uid": pod.uid},
        "/api/pods/{id}/": {"id": pod_row.pk},
        "/api/pools/{id}/": {"id": pool.pk},
        "/api/taint-rules/{id}/": {"id": "fuzz-rule"},
        "/api/watch-health/{kind}/": {"kind": "pods"},
        "/api/whatif/runs/{id}/": {"id": str(run.pk)},
        "/api/whatif/runs/{id}/cancel/": {"id": str(run.pk)},
        **{
            f"/api/maintenance/{{maintenance_id}}/{tail}": {"maintenance_id": maintenance.pk}
            for tail in ("", "apply/", "preview/", "progress/", "undo/")
        },
    }  # fmt: skip


def with_known(case: Any, use: bool, known: dict[str, Any]) -> Any:
    if not (use and known):
        return case
    if "{" in case.operation.path:
        case.path_parameters = {**(case.path_parameters or {}), **known}
    else:
        case.query = {**(case.query or {}), **known}
    return case


def test_it_answers_every_generated_request_without_a_server_error(
    mirrored: Any, wsgi_app: WSGIHandler, capsys: Any
) -> None:
    operator = User.objects.create_user("olivia")
    operator.groups.add(Group.objects.get_or_create(name="operator")[0])
    _, key = api_token_create(user=operator, name="fuzz")
    known = known_objects(operator)
    schema = schemathesis.openapi.from_dict(openapi_schema())
    schema.app = wsgi_app
    headers = {"Authorization": f"Token {key}"}
    failures: list[str] = []
    cases = 0
    operations = 0
    started = time.monotonic()

    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        here = known.get(operation.path, {})
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            strategy = st.tuples(operation.as_strategy(generation_mode=mode), st.booleans()).map(
                lambda pair, here=here: with_known(pair[0], pair[1], here)
            )

            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                database=None,
                derandomize=True,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(strategy)
            def run(case: Any) -> None:
                nonlocal cases
                cases += 1
                response = case.call(headers=headers)
                case.validate_response(response, checks=CHECKS, headers=headers)

            try:
                run()
            except Unsatisfiable:
                pass  # no input breaks this operation's schema (a lone string path parameter): nothing to send
            except (Exception, BaseExceptionGroup) as exc:  # collect every operation's failures
                failures.append(f"{operation.method.upper()} {operation.path} ({mode.value}): {exc}"[:3000])

    elapsed = time.monotonic() - started
    with capsys.disabled():
        print(
            f"\nschemathesis: {operations} operations, {cases} cases, {elapsed:.1f} s, {len(failures)} failing"
        )
    assert operations >= 30
    assert not failures, "\n\n".join(failures)
