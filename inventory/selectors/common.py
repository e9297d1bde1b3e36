"""What every selector module shares. Strings that come from the cluster are untrusted: `clip()` caps
them at settings.DRADASH_MAX_STRING where they are rendered as free text (messages, data, YAML)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings

from dra.quantity import Quantity
from inventory.kube import MIRRORED_KINDS

JSON = dict[str, Any]

# The kinds the mirror watches, in the order pages list them.
KINDS = list(MIRRORED_KINDS)

# Kinds as the mirror stores them (KubeObject.kind: the plural resource name).
SLICES = "resourceslices"


CLASSES = "deviceclasses"


CLAIMS = "resourceclaims"


RULES = "devicetaintrules"


PODS = "pods"


NODES = "nodes"


class InvalidFilters(ValueError):
    """A filter value is not acceptable; `errors` maps the field to its messages."""

    def __init__(self, errors: Mapping[str, Any]) -> None:
        self.errors = dict(errors)
        super().__init__("; ".join(f"{k}: {', '.join(map(str, v))}" for k, v in self.errors.items()))


def clip(text: Any, limit: int | None = None) -> str:
    """Cap an untrusted string for display."""
    value = "" if text is None else str(text)
    cap = limit if limit is not None else settings.DRADASH_MAX_STRING
    return value if len(value) <= cap else value[: cap - 1] + "…"


def nanos(text: Any) -> int:
    """A counter value from the cluster in nanos; a malformed one counts as 0 (validation refuses them)."""
    try:
        return Quantity.parse(str(text)).nano_value()
    except ValueError:
        return 0
