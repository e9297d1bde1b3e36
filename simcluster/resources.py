"""The kinds simcluster serves: `dra.kinds.KINDS`, each with what only an API server adds (its verbs).

Where a kind lives (group, version, plural, scope), its short names, categories, `/status` and field
selectors come from the one table in `dra.kinds`; routing, discovery, OpenAPI and field selectors here are
all driven from it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from dra.kinds import KINDS, RESOURCE_GROUP, Kind

__all__ = ["RESOURCES", "RESOURCE_GROUP", "ResourceDef", "lookup", "resource_for"]

STANDARD_VERBS: tuple[str, ...] = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)
STATUS_VERBS: tuple[str, ...] = ("get", "patch", "update")


@dataclass(frozen=True, slots=True)
class ResourceDef(Kind):
    """A `dra.kinds.Kind` as simcluster serves it."""

    verbs: tuple[str, ...] = STANDARD_VERBS

    @classmethod
    def serving(cls, kind: Kind) -> ResourceDef:
        return cls(**{f.name: getattr(kind, f.name) for f in fields(Kind)})

    def supports_field(self, label: str) -> bool:
        return label in self.field_labels


RESOURCES: tuple[ResourceDef, ...] = tuple(ResourceDef.serving(k) for k in KINDS)

BY_PLURAL: dict[str, ResourceDef] = {r.plural: r for r in RESOURCES}
BY_GVR: dict[tuple[str, str, str], ResourceDef] = {(r.group, r.version, r.plural): r for r in RESOURCES}

#: group -> versions in preference order (the first is the preferred version).
GROUP_VERSIONS: dict[str, list[str]] = {}
for _r in RESOURCES:
    _versions = GROUP_VERSIONS.setdefault(_r.group, [])
    if _r.version not in _versions:
        _versions.append(_r.version)


def resource_for(plural: str) -> ResourceDef | None:
    return BY_PLURAL.get(plural)


def lookup(group: str, version: str, plural: str) -> ResourceDef | None:
    return BY_GVR.get((group, version, plural))
