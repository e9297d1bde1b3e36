"""Pages: the what-if forms, and a run page with live progress and a result that explains itself."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from allocation.api.views import may_cancel
from allocation.models import RunKind, WhatIfRun
from allocation.services import whatif_reap_stale, whatif_run_cancel, whatif_run_create
from allocation.whatif_common import WhatIfInputError
from allocation.whatif_inputs import DEFAULT_MAX_PER_NODE, EFFECTS

PICK_LIMIT = 500


def _choices(kind: str) -> list[tuple[str, str]]:
    from inventory.models import KubeObject

    rows = KubeObject.objects.filter(kind=kind).order_by("namespace", "name").values_list("namespace", "name")
    return list(rows[:PICK_LIMIT])


def _form_input(kind: str, post: Any) -> dict[str, Any]:
    """The run input from one of the three forms (field names mirror the API's input)."""
    if kind == RunKind.TAINT_IMPACT:
        return {
            "selector": {k: post.get(k, "").strip() for k in ("driver", "pool", "device")},
            "taint": {
                "key": post.get("key", "").strip(),
                "value": post.get("value", "").strip(),
                "effect": post.get("effect", ""),
            },
        }
    source = post.get("source", "")
    data: dict[str, Any] = {"source": source}
    if source == "yaml":
        data["yaml"] = post.get("yaml", "")
    elif source == "pick":
        picked_kind, _, ref = post.get("pick", "").partition("|")
        namespace, _, name = ref.partition("/")
        data.update(kind=picked_kind, namespace=namespace, name=name)
    elif source == "class":
        data["deviceClassName"] = post.get("deviceClassName", "")
        data["count"] = _int(post.get("count"), 1)
    if kind == RunKind.HEADROOM:
        data["max_per_node"] = _int(post.get("max_per_node"), DEFAULT_MAX_PER_NODE)
    if post.get("node"):
        data["node"] = post.get("node", "").strip()
    return data


def _int(raw: Any, default: int) -> Any:
    if raw in (None, ""):
        return default
    try:
        return int(raw)
    except (TypeError, ValueError):
        return raw  # let validation name the field


@login_required
def whatif_index(request: HttpRequest) -> HttpResponse:
    errors: list[WhatIfInputError] = []
    active = request.GET.get("form", RunKind.FEASIBILITY)
    if request.method == "POST":
        kind = request.POST.get("kind", "")
        active = kind
        try:
            run = whatif_run_create(kind=kind, input=_form_input(kind, request.POST), user=request.user)
        except WhatIfInputError as exc:
            errors.append(exc)
        else:
            return redirect("allocation:whatif-run", run_id=run.id)
    context = {
        "errors": errors,
        "active": active,
        "posted": request.POST if request.method == "POST" else {},
        "claims": _choices("resourceclaims"),
        "templates": _choices("resourceclaimtemplates"),
        "pods": _choices("pods"),
        "classes": [name for _, name in _choices("deviceclasses")],
        "effects": EFFECTS,
        "pick_limit": PICK_LIMIT,
        "default_max_per_node": DEFAULT_MAX_PER_NODE,
        "recent": WhatIfRun.objects.select_related("created_by").order_by("-created_at")[:20],
    }
    return render(request, "allocation/index.html", context, status=400 if errors else 200)


def _run_or_404(run_id: Any) -> WhatIfRun:
    whatif_reap_stale()
    return get_object_or_404(WhatIfRun.objects.select_related("created_by"), pk=run_id)


@login_required
def whatif_run(request: HttpRequest, run_id: Any) -> HttpResponse:
    run = _run_or_404(run_id)
    return render(
        request,
        "allocation/run.html",
        {"run": run, "result": run.result or {}, "can_cancel": may_cancel(request.user, run)},
    )


@login_required
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
    if not may_cancel(request.user, run):
        return HttpResponseForbidden("only the user who started a run, an operator or an admin may cancel it")
    whatif_run_cancel(run=run)
    return redirect("allocation:whatif-run", run_id=run.id)
