"""What every selector module shares. Strings that come from the cluster are untrusted: `clip()` caps
them at settings.DRADASH_MAX_STRING where they are rendered as free text (messages, data, YAML)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Q, Value
from django.db.models.functions import Lower, StrIndex
from django.db.models.lookups import Contains, GreaterThan

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


# The Device columns a substring search reads, each with a substring index (migration 0014).
DEVICE_TEXT_COLUMNS = ("name", "pool", "node_name")


def device_text_contains(value: str, columns: tuple[str, ...] = DEVICE_TEXT_COLUMNS) -> Q:
    """Devices whose name, pool or node (or any of `columns`) contains `value`, which the caller has
    lowercased: names, pools and nodes are lowercase in Kubernetes (DNS names), so a case-sensitive match
    finds what a case-blind one would.

    PostgreSQL: a LIKE on `lower(column)`, which the trigram indexes of migration 0014 serve. They index
    the expression, not the bare column, on purpose: a trigram index on the column also answers `=` and
    `IN`, and the planner chose it for the mirror's `pool IN (…)` lookups at about a second per hundred
    pools (every pool name shares the trigrams of "node-"), where the (driver, pool, name) btree takes a
    millisecond. SQLite: instr() over the covering index (a quarter cheaper than its LIKE, which has no
    index to use for a substring).
    """
    found = Q(pk__in=[])
    for column in columns:
        if connection.vendor == "sqlite":
            found |= Q(GreaterThan(StrIndex(column, Value(value)), 0))
        else:
            found |= Q(Contains(Lower(column), value))
    return found
