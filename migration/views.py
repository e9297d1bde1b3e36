"""Migration pages: thin views over migration.upgrade. Everything shown from the input is escaped."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_safe

from migration.diffview import side_by_side, unified
from migration.upgrade import MAX_UPLOAD_BYTES, UploadError, manifests_upgrade, read_upload

NAV = "migration"


@login_required
@require_safe
def index(request: HttpRequest) -> HttpResponse:
    return redirect("migration:migration-upgrade")


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def upgrade(request: HttpRequest) -> HttpResponse:
    """Paste or upload manifests; see each document side by side, its notes and errors; download the result."""
    context: dict[str, Any] = {"nav": NAV, "max_bytes": MAX_UPLOAD_BYTES, "use_inventory": True, "text": ""}
    if request.method != "POST":
        return render(request, "migration/upgrade.html", context)
    try:
        text, source = read_upload(
            content_length=request.META.get("CONTENT_LENGTH"),
            text=lambda: request.POST.get("yaml", ""),
            upload=lambda: request.FILES.get("file"),
        )
    except UploadError as error:
        context["form_error"] = error
        return render(request, "migration/upgrade.html", context, status=error.status)
    use_inventory = request.POST.get("inventory") == "on"
    result = manifests_upgrade(text=text, source=source, use_inventory=use_inventory)
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
