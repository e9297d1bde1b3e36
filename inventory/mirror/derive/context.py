"""Per-batch caches of the taint rules, DeviceClasses and nodes, read on first use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from dra.allocator import SelectorMemo
from dra.availability import PoolAvailability, bare_node
from dra.poolshape import PoolMemo
from dra.taints import RuleIndex
from inventory.mirror.derive.classes import ClassMatcher, compile_class
from inventory.mirror.derive.common import JSON, chunks, json_path
from inventory.models import Device, KubeObject


@dataclass
class RuleCache:
    """The DeviceTaintRules and their index, kept by the writer across batches and cleared whenever a
    batch writes rules: re-reading 1,000 rules' JSON for every chunk of a recompute cost 0.15 s a chunk."""

    rules: list[JSON] | None = None
    index: RuleIndex | None = None
    #: the rules by the pool their selectors name (derive.availability), built on first use
    by_pool: Any = None

    def clear(self) -> None:
        self.rules = None
        self.index = None
        self.by_pool = None


class Context:
    """Per-batch caches of the few rules, classes and nodes, read on first use (pod batches need none)."""

    def __init__(
        self,
        matcher_cache: dict[tuple[str, str], tuple[ClassMatcher, str]],
        rules: RuleCache | None = None,
        pool_memo: PoolMemo[PoolAvailability] | None = None,
    ) -> None:
        self._matcher_cache = matcher_cache
        self._rule_cache = rules if rules is not None else RuleCache()
        self._classes: dict[str, ClassMatcher] | None = None
        self._class_objects: dict[str, JSON] | None = None
        self._any_nodes: bool | None = None
        self._all_nodes: dict[str, JSON] | None = None
        self._some_nodes: dict[str, JSON | None] = {}
        self._bare_nodes: dict[str, JSON] | None = None
        self.class_warnings: dict[str, str] = {}
        #: the allocator's selector outcomes, shared by the pools of this batch (`dra.allocator.memo`)
        self.selector_memo = SelectorMemo()
        #: pools' availability by their shape (`dra.poolshape`): kept by the writer across batches
        self.pool_memo: PoolMemo[PoolAvailability] = pool_memo if pool_memo is not None else PoolMemo()

    @classmethod
    def load(
        cls,
        matcher_cache: dict[tuple[str, str], tuple[ClassMatcher, str]],
        rules: RuleCache | None = None,
        pool_memo: PoolMemo[PoolAvailability] | None = None,
    ) -> Context:
        return cls(matcher_cache, rules, pool_memo)

    @property
    def rules(self) -> list[JSON]:
        cache = self._rule_cache
        if cache.rules is None:
            cache.rules = list(
                KubeObject.objects.filter(kind="devicetaintrules").values_list("raw", flat=True)
            )
        return cache.rules

    @property
    def rule_index(self) -> RuleIndex:
        """The rules by the fields their selectors name: a device's rules in eight lookups, not a scan
        of every rule (1,000 rules × 100,000 devices would be ~110 s of `selects`)."""
        cache = self._rule_cache
        if cache.index is None:
            cache.index = RuleIndex.of(self.rules)
        return cache.index

    @property
    def rule_cache(self) -> RuleCache:
        return self._rule_cache

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

    def nodes(self, names: frozenset[str] | None = None) -> list[JSON]:
        """Nodes as the allocator sees them (name and labels): those named, or all (None). Without any
        Node object in the mirror, bare nodes named by the devices' slices: the what-if's stand-in."""
        if not self._has_nodes():
            if self._bare_nodes is None:
                found = (
                    Device.objects.filter(node_selection="node")
                    .order_by()
                    .values_list("node_name", flat=True)
                )
                self._bare_nodes = {name: bare_node(name) for name in found.distinct() if name}
            return [n for name, n in self._bare_nodes.items() if names is None or name in names]
        if names is None:
            if self._all_nodes is None:
                self._all_nodes = self._load_nodes(KubeObject.objects.filter(kind="nodes"))
            return list(self._all_nodes.values())
        if self._all_nodes is not None:
            return [self._all_nodes[n] for n in sorted(names) if n in self._all_nodes]
        wanted = sorted(names - set(self._some_nodes))
        for batch in chunks(wanted):
            self._some_nodes.update(
                self._load_nodes(KubeObject.objects.filter(kind="nodes", namespace="", name__in=batch))
            )
            self._some_nodes.update({n: None for n in batch if n not in self._some_nodes})
        return [node for n in sorted(names) if (node := self._some_nodes.get(n)) is not None]

    def slice_nodes(self, slices: list[JSON]) -> None:
        """Without any Node object, the nodes these slices name join the bare stand-ins: slices whose
        device rows are not written yet (a list's page computes availability before the insert)."""
        if self._has_nodes():
            return
        self.nodes()  # the device rows' nodes first
        assert self._bare_nodes is not None
        for slice_obj in slices:
            name = (slice_obj.get("spec") or {}).get("nodeName")
            if name and name not in self._bare_nodes:
                self._bare_nodes[str(name)] = bare_node(str(name))

    def _has_nodes(self) -> bool:
        if self._any_nodes is None:
            self._any_nodes = KubeObject.objects.filter(kind="nodes").exists()
        return self._any_nodes

    @staticmethod
    def _load_nodes(rows: QuerySet[KubeObject]) -> dict[str, JSON]:
        # Only name and labels: a Node's status (images, conditions) is most of its JSON.
        found = rows.values_list("name", json_path("raw", "metadata", "labels"))
        return {name: {"metadata": {"name": name, "labels": labels or {}}} for name, labels in found}

    def class_names(self, driver: str, device: JSON) -> list[str]:
        return sorted(name for name, matcher in self.classes.items() if matcher(driver, device))
