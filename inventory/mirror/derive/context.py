"""Per-batch caches of the taint rules, DeviceClasses and nodes, read on first use."""

from __future__ import annotations

from dra.availability import bare_node
from inventory.mirror.derive.classes import ClassMatcher, compile_class
from inventory.mirror.derive.common import JSON
from inventory.models import Device, KubeObject


class Context:
    """Per-batch caches of the few rules, classes and nodes, read on first use (pod batches need none)."""

    def __init__(self, matcher_cache: dict[tuple[str, str], tuple[ClassMatcher, str]]) -> None:
        self._matcher_cache = matcher_cache
        self._rules: list[JSON] | None = None
        self._classes: dict[str, ClassMatcher] | None = None
        self._class_objects: dict[str, JSON] | None = None
        self._nodes: dict[str, JSON] | None = None
        self.class_warnings: dict[str, str] = {}

    @classmethod
    def load(cls, matcher_cache: dict[tuple[str, str], tuple[ClassMatcher, str]]) -> Context:
        return cls(matcher_cache)

    @property
    def rules(self) -> list[JSON]:
        if self._rules is None:
            self._rules = list(
                KubeObject.objects.filter(kind="devicetaintrules").values_list("raw", flat=True)
            )
        return self._rules

    @property
    def classes(self) -> dict[str, ClassMatcher]:
        if self._classes is None:
            self._classes = {}
            rows = KubeObject.objects.filter(kind="deviceclasses").values_list(
                "name", "resource_version", "raw"
            )
            for name, rv, raw in rows:
                key = (name, rv)
                if key not in self._matcher_cache:
                    self._matcher_cache[key] = compile_class(raw)
                matcher, warning = self._matcher_cache[key]
                self._classes[name] = matcher
                if warning:
                    self.class_warnings[name] = warning
        return self._classes

    @property
    def class_objects(self) -> dict[str, JSON]:
        """DeviceClasses as the cluster has them, by name."""
        if self._class_objects is None:
            self._class_objects = dict(
                KubeObject.objects.filter(kind="deviceclasses").values_list("name", "raw")
            )
        return self._class_objects

    @property
    def nodes(self) -> dict[str, JSON]:
        """Nodes as the allocator sees them (name and labels), by name. Without any Node object, bare
        nodes named by the devices' slices: the what-if's stand-in."""
        if self._nodes is None:
            rows = KubeObject.objects.filter(kind="nodes").values_list("name", "raw__metadata__labels")
            self._nodes = {
                name: {"metadata": {"name": name, "labels": labels or {}}} for name, labels in rows
            }
            if not self._nodes:
                names = Device.objects.filter(node_selection="node").values_list("node_name", flat=True)
                self._nodes = {name: bare_node(name) for name in names.distinct() if name}
        return self._nodes

    def class_names(self, driver: str, device: JSON) -> list[str]:
        return sorted(name for name, matcher in self.classes.items() if matcher(driver, device))
