"""Upgrading v1.33-era DRA manifests: the product's side of `dra.upgrade`.

The rules are pure and live in `dra.upgrade`; this module gives them the mirrored inventory (the database)
for the one thing v1 cannot say by itself — a DeviceTaintRule that selected devices by class or CEL — and
shapes the result for the command, the page and the API, which all call `manifests_upgrade`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import DatabaseError

from dra.allocator.selectors import SelectorBackend, default_backend
from dra.upgrade import (
    CompiledSelection,
    InventoryError,
    LegacyTaintSelector,
    StreamLimitError,
    StreamResult,
    TaintInventory,
    upgrade_text,
)
from inventory.models import Device, KubeObject
from maintenance.planning import DeviceRef, plan_rules

#: the biggest manifest the page and the API take (the command reads any size)
MAX_UPLOAD_BYTES = 1024 * 1024
#: the most documents a manifest of the page and the API may hold: each is parsed on its own, so 1 MiB of
#: `---` lines would be a quarter million parses (the command takes any number)
MAX_DOCUMENTS = 1000


class MirroredInventory:
    """Answers "which devices does this 1.33 selector pick?" from the mirror's rows, as they are now.

    A device is picked when it matches every field the selector sets: driver, pool, device name, the
    device class (the mirror's own evaluation of the class's CEL selectors, `Device.classes`) and every
    CEL expression (compiled once, evaluated on the device's JSON from its ResourceSlice exactly as a
    class selector is). The picks become rules the way the maintenance room plans them: one per pool
    whose every device is picked, one per device otherwise.
    """

    def __init__(
        self, *, backend: SelectorBackend | None = None, clock: Callable[[], datetime] | None = None
    ) -> None:
        self._backend = backend
        self._clock = clock or (lambda: datetime.now(UTC))

    @staticmethod
    def available() -> bool:
        return Device.objects.exists()

    def compile_selector(self, selector: LegacyTaintSelector) -> CompiledSelection:
        as_of = self._clock().strftime("%Y-%m-%dT%H:%M:%SZ")
        devices = Device.objects.all()
        if selector.driver is not None:
            devices = devices.filter(driver=selector.driver)
        if selector.pool is not None:
            devices = devices.filter(pool=selector.pool)
        if selector.device is not None:
            devices = devices.filter(name=selector.device)
        if selector.device_class is not None:
            if not KubeObject.objects.filter(kind="deviceclasses", name=selector.device_class).exists():
                raise InventoryError(
                    f"device class {selector.device_class!r} is not in the mirrored inventory"
                )
            devices = devices.filter(class_index__contains=f" {selector.device_class} ")
        rows = list(
            devices.order_by("driver", "pool", "name").values_list("driver", "pool", "name", "slice_uid")
        )
        picked = self._cel_filter(rows, selector.cel) if selector.cel else [DeviceRef(*r[:3]) for r in rows]
        plans = plan_rules(maintenance_id="upgrade", selected=picked, pool_devices=_pool_devices(picked))
        return CompiledSelection(
            selectors=tuple(plan.selector for plan in plans), device_count=len(picked), as_of=as_of
        )

    def _cel_filter(
        self, rows: list[tuple[str, str, str, str]], expressions: tuple[str, ...]
    ) -> list[DeviceRef]:
        backend = self._backend or default_backend()
        compiled = []
        for index, expression in enumerate(expressions):
            try:
                compiled.append(backend.engine.compile(expression))
            except backend.errors as error:
                raise InventoryError(f"selectors[{index}].cel.expression does not compile: {error}") from None
        slices = dict(
            KubeObject.objects.filter(kind="resourceslices", uid__in={r[3] for r in rows}).values_list(
                "uid", "raw"
            )
        )
        picked = []
        for driver, pool, name, slice_uid in rows:
            device = _device_json(slices.get(slice_uid), name)
            if device is None:
                continue
            try:
                data = backend.device_input(driver, device)
                if all(matcher.matches(data) for matcher in compiled):
                    picked.append(DeviceRef(driver, pool, name))
            except backend.errors as error:
                # upstream's eviction controller would not select the device either, but silently
                # compiling a narrower rule than the author meant is worse than saying so
                raise InventoryError(
                    f"a CEL selector fails on device {driver}/{pool}/{name}: {error}"
                ) from None
        return picked


def _device_json(raw: Any, name: str) -> dict[str, Any] | None:
    for device in ((raw or {}).get("spec") or {}).get("devices") or []:
        if device.get("name") == name:
            return dict(device)
    return None


def _pool_devices(picked: list[DeviceRef]) -> dict[tuple[str, str], list[str]]:
    pools = {(ref.driver, ref.pool) for ref in picked}
    members: dict[tuple[str, str], list[str]] = defaultdict(list)
    if not pools:
        return members
    rows = Device.objects.filter(driver__in={p[0] for p in pools}, pool__in={p[1] for p in pools})
    for driver, pool, name in rows.values_list("driver", "pool", "name"):
        if (driver, pool) in pools:
            members[(driver, pool)].append(name)
    return members


def manifests_upgrade(
    *, text: str, source: str = "<stdin>", use_inventory: bool = True, max_documents: int | None = None
) -> StreamResult:
    """Convert the old DRA documents of a YAML stream; legacy taint selectors use the mirrored inventory."""
    inventory: TaintInventory | None = None
    if use_inventory and inventory_available():
        inventory = MirroredInventory()
    return upgrade_text(text, source=source, inventory=inventory, max_documents=max_documents)


def inventory_available() -> bool:
    """True when the mirror has devices to compile legacy taint selectors against."""
    try:
        return MirroredInventory.available()
    except DatabaseError:  # no database, or not migrated: the command still converts everything else
        return False


class UploadError(Exception):
    """A manifest the page or the API cannot take: which form field, why, and the HTTP status."""

    def __init__(self, field: str, message: str, status: int = 400) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.status = status


def decode_manifest(data: bytes, *, field: str) -> str:
    """Bytes of an uploaded manifest as text: size-capped, UTF-8 (with or without BOM)."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise UploadError(
            field, f"too large: {len(data)} bytes; the limit is {MAX_UPLOAD_BYTES} bytes (1 MiB)", 413
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UploadError(field, f"not UTF-8 text (byte {error.start})") from None


def upgrade_report(result: StreamResult) -> dict[str, Any]:
    """The API's answer: per document what happened, and the new stream and its diff when nothing failed."""
    failed = result.failed
    return {
        "changed": result.changed and not failed,
        "failed": failed,
        "documents": [
            {
                "index": doc.index,
                "kind": doc.kind,
                "name": doc.name,
                "from": doc.from_version,
                "to": doc.to_version,
                "action": doc.action,
                "changed": doc.changed,
                "notes": doc.notes,
                "errors": [
                    {"field": p.path, "converted_path": p.converted_path or p.path, "message": p.message}
                    for p in doc.problems
                ],
            }
            for doc in result.documents
        ],
        "yaml": None if failed else result.text,
        "diff": None if failed else result.diff(),
    }


#: the request bodies the page and the API read at all: the manifest plus form or JSON overhead
#: (JSON escaping can double a YAML text); checked from Content-Length before the body is parsed
MAX_BODY_BYTES = 2 * MAX_UPLOAD_BYTES + 64 * 1024


@dataclass(frozen=True)
class Manifest:
    """The manifest of a page or API request, where it came from (the file name, or "pasted") and the
    form field that carried it (`file` or `yaml`), for errors about its content."""

    text: str
    source: str
    field: str


#: the fields of a multipart upgrade request (the page's form and the API): the text, or one file
UPGRADE_FORM_FIELDS = ("file", "inventory", "yaml")


def form_file(fields: Iterable[str], files: Sequence[Any]) -> Any:
    """The one uploaded file of a form (None if none), after refusing a field the form does not have:
    a misspelt `inventory` must not quietly leave the inventory on. `fields` are the names posted."""
    unknown = sorted(set(fields) - set(UPGRADE_FORM_FIELDS))
    if unknown:
        raise UploadError(unknown[0][:100], f"is not a field (known: {', '.join(UPGRADE_FORM_FIELDS)})")
    if len(files) > 1:
        raise UploadError("file", f"one file per request, got {len(files)}")
    return files[0] if files else None


def read_upload(
    *, content_length: str | None, text: Callable[[], Any], upload: Callable[[], Any]
) -> Manifest:
    """The manifest of a page or API request.

    `text` and `upload` read the request lazily, so a body over the limit is refused before it is parsed.
    """
    try:
        length = int(content_length or 0)
    except ValueError:
        length = 0
    if length > MAX_BODY_BYTES:
        raise UploadError(
            "yaml",
            f"request too large: {length} bytes; manifests are limited to {MAX_UPLOAD_BYTES} bytes (1 MiB)",
            413,
        )
    file = upload()
    if file is not None:
        pasted = text()
        if isinstance(pasted, str) and pasted.strip():
            raise UploadError(
                "yaml",
                "both yaml and file were given: send the manifests in one of them (paste or upload, not both)",
            )
        if file.size > MAX_UPLOAD_BYTES:
            raise UploadError(
                "file", f"too large: {file.size} bytes; the limit is {MAX_UPLOAD_BYTES} bytes (1 MiB)", 413
            )
        # One line ending in and out: converted documents are written with "\n", so the rest is read that way.
        text_of_file = decode_manifest(file.read(), field="file").replace("\r\n", "\n")
        return Manifest(text_of_file, str(file.name or "upload"), "file")
    value = text()
    if value is None or (isinstance(value, str) and not value.strip()):
        raise UploadError("yaml", "Required value: paste manifests or upload a file")
    if not isinstance(value, str):
        raise UploadError("yaml", "must be a string: the YAML text")
    size = len(value.encode("utf-8"))
    if size > MAX_UPLOAD_BYTES:
        raise UploadError(
            "yaml", f"too large: {size} bytes; the limit is {MAX_UPLOAD_BYTES} bytes (1 MiB)", 413
        )
    # a textarea posts CRLF (HTML form encoding)
    return Manifest(value.replace("\r\n", "\n"), "pasted", "yaml")


def manifest_upgrade(manifest: Manifest, *, use_inventory: bool) -> StreamResult:
    """`manifests_upgrade` for the page and the API: a stream beyond the converter's limits
    (`dra.yamlshape`) or with more than `MAX_DOCUMENTS` is an UploadError (400) naming the field
    that carried it."""
    try:
        return manifests_upgrade(
            text=manifest.text,
            source=manifest.source,
            use_inventory=use_inventory,
            max_documents=MAX_DOCUMENTS,
        )
    except StreamLimitError as error:
        raise UploadError(manifest.field, error.message) from None
