"""Upgrade v1.33-era DRA manifests (resource.k8s.io v1alpha3, v1beta1, v1beta2) to resource.k8s.io/v1.

* `rules` — the conversion of one object (flat requests → ``exactly``, ``basic`` devices → flat,
  plain capacities → ``{value}``, legacy DeviceTaintRule selectors compiled through a `TaintInventory`).
* `readback` — the converted object as the API server gives it back (its defaults, canonical
  quantities, no empty fields it does not keep), so the output is what `kubectl get -o yaml` would show.
* `stream` — a YAML stream in and out with ruamel.yaml's round trip: untouched documents byte-for-byte,
  comments kept, every converted document checked against the 1.37 schema (`schema`).
  A stream beyond `dra.yamlshape` (nesting depth, alias expansion) is a `StreamLimitError`.

Pure: no Django. The product's inventory (the mirrored database) is passed in by the caller
(`migration.upgrade`), so these rules are the same for the command, the page and the API.
"""

from ..yamlshape import MAX_ALIAS_NODES, MAX_DEPTH
from .rules import (
    CompiledSelection,
    FieldProblem,
    InventoryError,
    LegacyTaintSelector,
    Outcome,
    TaintInventory,
    compiled_rule_name,
    upgrade_object,
)
from .stream import (
    DocumentResult,
    StreamLimitError,
    StreamResult,
    load_documents,
    split_documents,
    unified_diff,
    upgrade_text,
)

__all__ = [
    "CompiledSelection",
    "DocumentResult",
    "FieldProblem",
    "InventoryError",
    "LegacyTaintSelector",
    "MAX_ALIAS_NODES",
    "MAX_DEPTH",
    "Outcome",
    "StreamLimitError",
    "StreamResult",
    "TaintInventory",
    "compiled_rule_name",
    "load_documents",
    "split_documents",
    "unified_diff",
    "upgrade_object",
    "upgrade_text",
]
