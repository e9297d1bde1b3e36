"""Migration pages: thin views over migration.upgrade. Everything shown from the input is escaped."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_safe

from dradash.context import user_can_author
from dradash.fieldnames import ShownError, shown_errors
from migration.device_plugins import device_class_names, device_plugin_assistant
from migration.diffview import side_by_side, unified
from migration.pool_status import (
    GATE,
    PoolStatusInputError,
    PoolStatusWriteError,
    pool_status_create,
    pool_status_delete,
    pool_status_drivers,
    pool_status_refresh,
    pool_status_snapshots,
)
from migration.upgrade import (
    MAX_DOCUMENTS,
    MAX_UPLOAD_BYTES,
    UploadError,
    form_file,
    manifest_upgrade,
    read_upload,
)

NAV = "migration"

#: The Upgrade manifests form's labels, by field (the page renders them; a refused field is named by its
#: label, then its field: "Paste manifests (yaml): …"). The API names the field alone.
UPGRADE_LABELS = {
    "yaml": "Paste manifests",
    "file": "Upload a file",
    "inventory": "compile class/CEL taint-rule selectors against the inventory",
}
#: The snapshot form's labels, by the spec field each sets (the page renders them).
POOL_STATUS_LABELS = {
    "driver": "Driver",
    "poolName": "Pool",
    "limit": "Limit",
    "defaultPartitionTypeAttribute": "Partition attribute",
}


@login_required
@require_safe
def index(request: HttpRequest) -> HttpResponse:
    return redirect("migration:migration-upgrade")


@login_required
@require_safe
def device_plugins(request: HttpRequest) -> HttpResponse:
    """Device plugin → DRA: per extended resource, its pods, both backends per node, conflicts, the what-if."""
    assistant = device_plugin_assistant()
    classes = sorted({c for r in assistant.resources for c in [r.device_class] if c})
    return render(
        request,
        "migration/device_plugins.html",
        {"nav": NAV, "assistant": assistant, "classes": classes, "all_classes": device_class_names()},
    )


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def upgrade(request: HttpRequest) -> HttpResponse:
    """Paste or upload manifests; see each document side by side, its notes and errors; download the result."""
    context: dict[str, Any] = {
        "nav": NAV,
        "max_bytes": MAX_UPLOAD_BYTES,
        "max_documents": MAX_DOCUMENTS,
        "use_inventory": True,
        "text": "",
        "labels": UPGRADE_LABELS,
    }
    if request.method != "POST":
        return render(request, "migration/upgrade.html", context)
    try:
        manifest = read_upload(
            content_length=request.META.get("CONTENT_LENGTH"),
            text=lambda: request.POST.get("yaml", ""),
            upload=lambda: form_file(
                (name for name in [*request.POST, *request.FILES] if name != "csrfmiddlewaretoken"),
                request.FILES.getlist("file"),
            ),
        )
        use_inventory = request.POST.get("inventory") == "on"
        result = manifest_upgrade(manifest, use_inventory=use_inventory)
    except UploadError as error:
        context["form_errors"] = shown_errors([error], UPGRADE_LABELS)
        if error.status != 413:  # the form comes back as it was sent (a body over the limit is never read)
            context.update(
                text=request.POST.get("yaml", ""), use_inventory=request.POST.get("inventory") == "on"
            )
        return render(request, "migration/upgrade.html", context, status=error.status)
    text, source = manifest.text, manifest.source
    documents = []
    for doc in result.documents:
        rows = side_by_side(doc.original, doc.text) if doc.changed else []
        documents.append({"doc": doc, "rows": rows, "unified": unified(rows)})
    context.update(
        text=text,
        source=source,
        use_inventory=use_inventory,
        result=result,
        documents=documents,
        converted=[d for d in documents if d["doc"].changed],
        kept=[d["doc"] for d in documents if d["doc"].action == "kept"],
        refused=[d["doc"] for d in documents if d["doc"].problems],
        download_name=_download_name(source),
    )
    return render(request, "migration/upgrade.html", context, status=200)


def _download_name(source: str) -> str:
    stem = source.rsplit("/", 1)[-1].rsplit(".", 1)[0] if source not in ("", "pasted") else "manifests"
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in stem)[:80] or "manifests"
    return f"{safe}.v1.yaml"


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def pool_status(request: HttpRequest) -> HttpResponse:
    """ResourcePoolStatusRequests: create one for a driver (and pool), see its status beside dradash's own
    figures, delete it, or create it again and delete the old one to refresh."""
    can_write = user_can_author(request.user)
    context: dict[str, Any] = {
        "nav": NAV, "gate": GATE, "can_write": can_write, "posted": {}, "labels": POOL_STATUS_LABELS,
    }  # fmt: skip
    status = 200
    if request.method == "POST":
        action = request.POST.get("action", "")
        name = request.POST.get("name", "")
        try:
            if not can_write:
                raise PoolStatusWriteError(403, "only operators and admins may create or delete snapshots")
            if action == "create":
                created = pool_status_create(
                    driver=request.POST.get("driver", ""),
                    pool=request.POST.get("poolName", ""),
                    limit=request.POST.get("limit", ""),
                    partition_attribute=request.POST.get("defaultPartitionTypeAttribute", ""),
                    user=request.user,
                )
                messages.success(
                    request, f"Created {created['metadata']['name']}; the controller fills its status."
                )
                driver = str((created.get("spec") or {}).get("driver", ""))
                if driver not in pool_status_drivers():
                    messages.warning(
                        request,
                        f"dradash's inventory has no pools of driver {driver}: the snapshot will list none "
                        "unless the driver publishes ResourceSlices under that name (check its spelling).",
                    )
            elif action == "delete":
                pool_status_delete(name=name, user=request.user)
                messages.success(request, f"Deleted {name}.")
            elif action == "refresh":
                created = pool_status_refresh(name=name, user=request.user)
                messages.success(request, f"Created {created['metadata']['name']} and deleted {name}.")
            else:
                raise PoolStatusInputError("action", "must be create, delete or refresh")
            return redirect("migration:migration-pool-status")
        except PoolStatusInputError as error:
            context["form_errors"] = shown_errors({f: [m] for f, m in error.errors}, POOL_STATUS_LABELS)
            context["posted"] = request.POST
            status = 400
        except PoolStatusWriteError as error:
            context["form_errors"] = [ShownError("", error.message)]
            context["posted"] = request.POST
            status = error.status if 400 <= error.status < 600 else 502
    context.update(snapshots=pool_status_snapshots(), drivers=pool_status_drivers())
    return render(request, "migration/pool_status.html", context, status=status)
