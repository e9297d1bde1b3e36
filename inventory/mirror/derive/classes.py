"""Which DeviceClasses select each device (their CEL selectors, evaluated by dra's CEL engine)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from dra.allocator.memo import device_refs
from inventory.mirror import sql
from inventory.mirror.derive.common import JSON, DeviceKey, chunks
from inventory.models import Device, KubeObject

if TYPE_CHECKING:
    from inventory.mirror.derive.context import Context

log = logging.getLogger(__name__)

CLASS_FIELDS = ["classes", "class_index"]


ClassMatcher = Callable[[str, JSON], bool]


_DRIVER_ONLY = re.compile(r"""^\s*device\.driver\s*==\s*["']([^"']+)["']\s*$""")


def compile_class(cls: Mapping[str, Any]) -> tuple[ClassMatcher, str]:
    """A predicate over (driver, device JSON) for a DeviceClass's selectors, and a warning if it cannot work."""
    expressions = [
        str(((s or {}).get("cel") or {}).get("expression", ""))
        for s in (cls.get("spec") or {}).get("selectors") or []
    ]
    try:  # the backend the allocator uses (DRADASH_CEL_BACKEND), so the mirror matches classes the same way
        from dra.allocator.selectors import default_backend

        backend = default_backend()
    except ImportError:  # the allocator's CEL engine is optional for the mirror; fall back to driver checks
        drivers = []
        for expression in expressions:
            match = _DRIVER_ONLY.match(expression)
            if not match:
                return (lambda driver, device: False), "CEL engine unavailable: class selectors not evaluated"
            drivers.append(match.group(1))
        return (lambda driver, device: all(driver == d for d in drivers)), ""
    try:
        compiled = [backend.engine.compile(e) for e in expressions]
    except backend.errors as exc:
        return (lambda driver, device: False), f"selector does not compile: {exc}"
    return _CelClassMatcher(compiled, expressions, backend.device_input, backend.errors), ""


_DRIVER_GUARD = re.compile(r"""^\s*device\.driver\s*==\s*"([^"]+)"\s*(?:&&|$)""")


_MEMO_LIMIT = 50_000


class _CelClassMatcher:
    """Evaluates a class's CEL selectors, skipping work where the answer is already known.

    * `device.driver == "x" && …` as the first term: other drivers are false without evaluating.
    * When the expressions read only `device.driver`, `device.allowMultipleAllocations` and
      `device.attributes["d"].n` / `device.capacity["d"].n`, the answer depends only on those values,
      so devices that agree on them share one evaluation (a node's GPUs differ in UUIDs, not model).
    """

    def __init__(
        self,
        compiled: list[Any],
        expressions: list[str],
        to_input: Any,
        cel_error: type[Exception] | tuple[type[Exception], ...],
    ):
        self.compiled = compiled
        self.to_input = to_input
        self.cel_error = cel_error
        # A guard only short-circuits when nothing can override it (no `||`, no ternary).
        guards = [_DRIVER_GUARD.match(e) for e in expressions if "||" not in e and "?" not in e]
        self.drivers = {m.group(1) for m in guards if m}
        # What the expressions read of `device`, as the allocator's memo parses it (dra.allocator.memo):
        # `device.attributes["d"].exists(…)` or `cel.bind(x, device, …)` read more than plain paths.
        self.refs: list[tuple[str, str, str]] | None = []
        for expression in expressions:
            refs = device_refs(expression)
            if refs is None:
                self.refs = None
                break
            self.refs.extend(refs)
        self.memo: dict[tuple[Any, ...], bool] = {}

    def _key(self, driver: str, device: JSON) -> tuple[Any, ...] | None:
        if self.refs is None:
            return None
        key: list[Any] = [driver]
        for field_name, domain, name in self.refs:
            if not domain:
                key.append(device.get(field_name))
                continue
            values = device.get(field_name) or {}
            qualified = f"{domain}/{name}"
            # The short spelling is the same attribute; with both, CEL sees the later one.
            short = (
                domain == driver
                and name in values
                and (
                    qualified not in values
                    or next(k for k in reversed(values) if k in (qualified, name)) == name
                )
            )
            value = values[name] if short else values.get(qualified)
            key.append(str(value))  # a cheap exact key: equal text means equal JSON values
        return tuple(key)

    def __call__(self, driver: str, device: JSON) -> bool:
        if not self.compiled:
            return True
        if len(self.drivers) > 1 or (self.drivers and driver not in self.drivers):
            return False
        key = self._key(driver, device)
        if key is not None and key in self.memo:
            return self.memo[key]
        result = self._evaluate(driver, device)
        if key is not None:
            if len(self.memo) > _MEMO_LIMIT:
                self.memo.clear()
            self.memo[key] = result
        return result

    def _evaluate(self, driver: str, device: JSON) -> bool:
        try:
            data = self.to_input(driver, device)
            return all(selector.matches(data) for selector in self.compiled)
        except self.cel_error:
            # Upstream aborts allocation on a runtime error; for display the device simply does not match.
            return False
        except Exception:  # malformed device JSON from the cluster must not stop the mirror
            log.debug("class selector failed on a device of %s", driver, exc_info=True)
            return False


def fill_classes(row: Device, ctx: Context, device_json: JSON) -> None:
    row.classes = ctx.class_names(row.driver, device_json)
    row.class_index = " " + " ".join(row.classes) + " "


def refresh_classes(ctx: Context, *, skip: set[DeviceKey]) -> None:
    """Re-evaluate every device against every class (after a DeviceClass changed); `skip` was just rebuilt."""
    wanted = [
        pk
        for pk, *key in Device.objects.values_list("pk", "driver", "pool", "name")
        if tuple(key) not in skip
    ]
    if not wanted:
        return
    devices: list[Device] = []
    for batch in chunks(wanted):
        devices.extend(
            Device.objects.filter(pk__in=batch).only(
                "pk", "driver", "pool", "name", "slice_uid", *CLASS_FIELDS
            )
        )
    slice_uids = sorted({d.slice_uid for d in devices})
    slices: dict[str, JSON] = {}
    for batch in chunks(slice_uids):
        slices.update(
            KubeObject.objects.filter(kind="resourceslices", uid__in=batch).values_list("uid", "raw")
        )
    changed = []
    for device in devices:
        raw = slices.get(device.slice_uid) or {}
        device_json = next(
            (d for d in (raw.get("spec") or {}).get("devices") or [] if d.get("name") == device.name), None
        )
        if device_json is None:
            continue
        before = device.classes
        fill_classes(device, ctx, device_json)
        if device.classes != before:
            changed.append(device)
    sql.update(Device, changed, fields=CLASS_FIELDS)
