"""Per-batch caches of the taint rules and compiled DeviceClasses, read on first use."""

from __future__ import annotations

from inventory.mirror.derive.classes import ClassMatcher, compile_class
from inventory.mirror.derive.common import JSON
from inventory.models import KubeObject


class Context:
    """Per-batch caches of the few rules and classes, read on first use (pod and claim batches need neither)."""

    def __init__(self, matcher_cache: dict[tuple[str, str], tuple[ClassMatcher, str]]) -> None:
        self._matcher_cache = matcher_cache
        self._rules: list[JSON] | None = None
        self._classes: dict[str, ClassMatcher] | None = None
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

    def class_names(self, driver: str, device: JSON) -> list[str]:
        return sorted(name for name, matcher in self.classes.items() if matcher(driver, device))
