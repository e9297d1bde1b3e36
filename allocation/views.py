"""Pages: a form per what-if kind, and a run page with live progress and a result that explains itself.

Each kind's template renders its own form and result (`allocation.whatif.base`); these views only
loop over the registered kinds.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from allocation.models import WhatIfRun
from allocation.services import (
    whatif_may_cancel,
    whatif_run_cancel,
    whatif_run_create,
    whatif_run_input_shown,
    whatif_run_settle,
)
from allocation.whatif.base import WhatIfInputError, WhatIfLimitError, get_kind, kinds
from allocation.whatif.inputs import DEFAULT_MAX_PER_NODE, EFFECTS, MAX_YAML_BYTES
from dradash.fieldnames import shown_errors
from inventory.models import KubeObject

PICK_LIMIT = 500


def _choices(kind: str) -> list[tuple[str, str]]:
    rows = KubeObject.objects.filter(kind=kind).order_by("namespace", "name").values_list("namespace", "name")
    return list(rows[:PICK_LIMIT])


#: The forms' labels of the API's input fields, so that a 400 next to a form names what the user sees
#: (the API's name follows, in code). The most specific dotted prefix wins; list indexes are ignored.
FORM_LABELS = {
    "input.source": "What to check",
    "input.kind": "Claim, template or pod",
    "input.namespace": "Claim, template or pod",
    "input.name": "Claim, template or pod",
    "input.yaml": "YAML",
    "input.node": "Only node",
    "input.deviceClassName": "DeviceClass",
    "input.count": "Devices per copy",
    "input.max_per_node": "At most, per node",
    "input.resource": "Extended resource",
    "input.nodes": "On nodes",
    "input.selector": "Devices",
    "input.selectors": "Devices",
    "input.selector.driver": "Driver",
    "input.selector.pool": "Pool",
    "input.selector.device": "Device",
    "input.taint": "Taint",
    "input.taint.key": "Key",
    "input.taint.value": "Value",
    "input.taint.effect": "Effect",
}


def _index(
    request: HttpRequest, *, errors: list[WhatIfInputError], active: str, posted: Any, status: int
) -> HttpResponse:
    context = {
        "kinds": kinds(),
        "errors": shown_errors(errors, FORM_LABELS),
        "active": active,
        "posted": posted,
        "claims": _choices("resourceclaims"),
        "templates": _choices("resourceclaimtemplates"),
        "pods": _choices("pods"),
        "classes": [name for _, name in _choices("deviceclasses")],
        "effects": EFFECTS,
        "pick_limit": PICK_LIMIT,
        "default_max_per_node": DEFAULT_MAX_PER_NODE,
        "max_yaml_kib": MAX_YAML_BYTES // 1024,
        "recent": WhatIfRun.objects.select_related("created_by").order_by("-created_at")[:20],
    }
    return render(request, "allocation/index.html", context, status=status)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def whatif_index(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        registered = kinds()
        default = registered[0].name if registered else ""
        # ?form=<kind>&<its fields>: the form opened and filled in, as a link from a claim or pod page
        posted = request.GET if "form" in request.GET else {}
        return _index(request, errors=[], active=request.GET.get("form", default), posted=posted, status=200)
    name = request.POST.get("kind", "")
    try:
        kind = get_kind(name)
    except WhatIfInputError as exc:  # no form of its own to show it next to: above the forms
        return _index(request, errors=[exc], active="", posted={}, status=400)
    try:
        run = whatif_run_create(kind=name, input=kind.form_input(request.POST), user=request.user)
    except WhatIfLimitError as exc:
        return _index(request, errors=[exc], active=name, posted=request.POST, status=429)
    except WhatIfInputError as exc:
        return _index(request, errors=[exc], active=name, posted=request.POST, status=400)
    return redirect("allocation:whatif-run", run_id=run.id)


def whatif_form_too_large(request: HttpRequest, *, length: int, limit: int) -> HttpResponse:
    """The form again (without the paste: it was too big to read), saying what the limits are."""
    error = WhatIfInputError(
        "input.yaml",
        f"the form sent {length / 1048576:.1f} MiB, more than this page reads ({limit // 1048576} MiB); "
        f"a pasted object may be at most {MAX_YAML_BYTES // 1024} KiB",
    )
    return _index(request, errors=[error], active="", posted={}, status=413)


def _run_or_404(run_id: Any) -> WhatIfRun:
    run = get_object_or_404(WhatIfRun.objects.select_related("created_by"), pk=run_id)
    return whatif_run_settle(run=run)


@login_required
@require_safe
def whatif_run(request: HttpRequest, run_id: Any) -> HttpResponse:
    run = _run_or_404(run_id)
    try:
        kind = get_kind(run.kind)
    except WhatIfInputError:
        kind = None  # a kind no module registers any more: the page still shows the run's state
    return render(
        request,
        "allocation/run.html",
        {
            "run": run,
            "run_input": whatif_run_input_shown(user=request.user, run=run),
            "kind": kind,
            "result": run.result or {},
            "can_cancel": whatif_may_cancel(user=request.user, run=run),
        },
    )


@login_required
@require_safe
def whatif_run_status(request: HttpRequest, run_id: Any) -> HttpResponse:
    """The progress fragment (polling fallback without websockets); a finished run reloads the page."""
    run = _run_or_404(run_id)
    response = render(request, "allocation/partials/run_status.html", {"run": run})
    if run.is_finished and request.GET.get("was") != "finished":
        response["HX-Refresh"] = "true"
    return response


@login_required
@require_POST
def whatif_run_cancel_view(request: HttpRequest, run_id: Any) -> HttpResponse:
    run = _run_or_404(run_id)
    if not whatif_may_cancel(user=request.user, run=run):
        return HttpResponseForbidden("only the user who started a run, an operator or an admin may cancel it")
    whatif_run_cancel(run=run)
    return redirect("allocation:whatif-run", run_id=run.id)
