"""Pools that look the same to `dra.availability`, computed once (`PoolMemo`).

A large cluster is made of a few kinds of node, so most of its pools differ only by names: node-0001's
eight GPUs and node-0002's, free or held by claims named differently. `pool_availability` treats those
names as opaque identifiers — it compares them and sorts them, and copies them into its sentences — so
the answer for one pool is the answer for another with the names swapped.

`shape` rewrites a node-local pool's inputs with each name replaced by a token (the pool's name, its
nodes', its slices', its claims' namespace/name/uid, its rules'), tokens numbered in the names' own sort
order, and keeps everything else as it is: a key of the result (a digest of those inputs). `PoolShape.back`
puts the names back into a sentence of a result computed from the rewritten inputs.

It stays exact by refusing what it cannot prove (the caller then computes the pool itself):
* pools reachable by node selectors or from every node (labels would matter, and every node);
* inputs where a replaced name still appears anywhere in the rewritten inputs (inside a CEL
  expression, an attribute, another field), or that already contain the token mark;
* a restored sentence that still holds a token (a name was escaped or cut on its way in).

DeviceTaintRules that parse and carry a taint no allocation looks at (effect None or an unknown
effect) leave a pool's answer as it is and are left out of its shape.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import orjson

from dra.allocator import AllocationError
from dra.allocator.cel.device import split_qualified_name
from dra.allocator.memo import device_refs
from dra.allocator.model import parse_taint_rule
from dra.objects import node_selection, slice_spec
from dra.taints import BLOCKING_EFFECTS

T = TypeVar("T")
Json = dict[str, Any]

#: opens every token; a name (a DNS label or subdomain, a uid) never holds it, and `repr` keeps it as is
MARK = "\u27e8"
MARK_BYTES = MARK.encode()
_CLOSE = "\u27e9"


@dataclass(frozen=True)
class PoolShape:
    """A pool's inputs with its names replaced by tokens, and the way back."""

    key: bytes
    pool: str
    slices: list[Json]
    claims: list[Json]
    rules: list[Json]
    nodes: list[Json]
    #: token → the name it stands for
    names: dict[str, str]

    def back(self, text: str) -> str | None:
        """A sentence computed from this shape's inputs with the names put back, or None when it still
        holds a token afterwards (a name was escaped or cut on its way in: compute the pool itself)."""
        if MARK in text:
            for token, name in self.names.items():
                text = text.replace(token, name)
        return None if MARK in text or "u27e8" in text else text


class PoolMemo(Generic[T]):
    """Pool shape key → the answer computed for it (`dra.availability.PoolAvailability`), the last `limit`."""

    def __init__(self, limit: int = 1024) -> None:
        self.limit = limit
        self._results: OrderedDict[bytes, T] = OrderedDict()
        #: pools answered from the memo, and computed; for tests and profiles
        self.hits = 0
        self.misses = 0

    def get(self, key: bytes) -> T | None:
        found = self._results.get(key)
        if found is not None:
            self._results.move_to_end(key)
        return found

    def put(self, key: bytes, result: T) -> None:
        self._results[key] = result
        self._results.move_to_end(key)
        while len(self._results) > self.limit:
            self._results.popitem(last=False)


class _Tokens:
    """Names of one kind → tokens numbered in the names' sort order (so sorting by token sorts by name),
    or, `in_order`, in the order they come (names nothing sorts: the claims')."""

    def __init__(self, kind: str, names: Iterable[str], *, in_order: bool = False) -> None:
        ordered = list(dict.fromkeys(names)) if in_order else sorted(set(names))
        self.of = {name: f"{MARK}{kind}{i:06d}{_CLOSE}" for i, name in enumerate(ordered)}
        #: how many values were replaced by a token (each token holds the mark once)
        self.used = 0

    def __call__(self, name: Any) -> Any:
        if isinstance(name, str) and (token := self.of.get(name)) is not None:
            self.used += 1
            return token
        return name


def shape(
    *,
    driver: str,
    pool: str,
    slices: Sequence[Json],
    claims: Sequence[Json],
    rules: Sequence[Json],
    classes: Sequence[Json],
    nodes: Sequence[Json],
    features: Iterable[str],
    max_per_node: int,
) -> PoolShape | None:
    """The shape of a pool whose slices all name their node, or None (compute the pool itself).
    `claims`: those holding a device of the pool, only their allocation results of it."""
    if not slices:
        return None
    node_names: set[str] = set()
    slice_names: list[str] = []
    for s in slices:
        selection, node = node_selection(slice_spec(s))
        name = (s.get("metadata") or {}).get("name")
        if selection != "node" or not isinstance(node, str) or not isinstance(name, str):
            return None
        node_names.add(node)
        slice_names.append(name)
    claim_meta = [c.get("metadata") or {} for c in claims]
    if not all(isinstance(m, Mapping) for m in claim_meta):
        return None
    try:
        classes_blob = orjson.dumps(list(classes), option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None  # what orjson cannot write (a huge integer): compute the pool itself
    if MARK_BYTES in classes_blob:
        return None
    pool_t = _Tokens("pool", [pool])
    node_t = _Tokens("node", node_names)
    slice_t = _Tokens("slice", slice_names)
    # The allocator keeps claims in the order given and sorts none of their names: tokens in that order.
    ns_t = _Tokens("ns", [str(m.get("namespace") or "") for m in claim_meta], in_order=True)
    claim_t = _Tokens("claim", [str(m.get("name") or "") for m in claim_meta], in_order=True)
    uid_t = _Tokens("uid", [str(m.get("uid") or "") for m in claim_meta], in_order=True)
    unread = _unread_strings_of(classes_blob, classes)
    kept_rules = [r for r in rules if not _inert(r)]
    rule_t = _Tokens("rule", [str((r.get("metadata") or {}).get("name") or "") for r in kept_rules])
    on_pool = pool_t

    shaped_slices = []
    for s in slices:
        spec = dict(slice_spec(s))
        spec["nodeName"] = node_t(spec.get("nodeName"))
        if unread is not None and isinstance(spec.get("devices"), list):
            spec["devices"] = [_blank(d, driver, unread) for d in spec["devices"]]
        if isinstance(spec.get("pool"), Mapping):
            spec["pool"] = {**spec["pool"], "name": on_pool(spec["pool"].get("name"))}
        shaped_slices.append(
            {"metadata": {"name": slice_t((s.get("metadata") or {}).get("name"))}, "spec": spec}
        )
    shaped_claims = []
    for claim, meta in zip(claims, claim_meta, strict=True):
        results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results")
        if not isinstance(results, list) or not all(isinstance(r, Mapping) for r in results):
            return None
        shaped_claims.append(
            {
                "metadata": {
                    "namespace": ns_t(str(meta.get("namespace") or "")),
                    "name": claim_t(str(meta.get("name") or "")),
                    "uid": uid_t(str(meta.get("uid") or "")),
                },
                "status": {
                    "allocation": {
                        "devices": {"results": [{**r, "pool": on_pool(r.get("pool"))} for r in results]}
                    }
                },
            }
        )
    shaped_rules = []
    for rule in kept_rules:
        rule_spec = rule.get("spec")
        if isinstance(rule_spec, Mapping) and isinstance(rule_spec.get("deviceSelector"), Mapping):
            selector = dict(rule_spec["deviceSelector"])
            if "pool" in selector:
                selector["pool"] = on_pool(selector["pool"])
            rule_spec = {**rule_spec, "deviceSelector": selector}
        shaped_rules.append(
            {
                "metadata": {"name": rule_t(str((rule.get("metadata") or {}).get("name") or ""))},
                "spec": rule_spec,
            }
        )
    present = sorted(
        str((n.get("metadata") or {}).get("name", ""))
        for n in nodes
        if (n.get("metadata") or {}).get("name") in node_names
    )
    shaped_nodes = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node_t(name)}} for name in present
    ]

    inputs = [
        driver,
        shaped_slices,
        shaped_claims,
        shaped_rules,
        shaped_nodes,
        sorted(features),
        max_per_node,
    ]
    try:
        blob = orjson.dumps(inputs, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None
    all_tokens = (pool_t, node_t, slice_t, ns_t, claim_t, uid_t, rule_t)
    # Every mark in the rewritten inputs is one of the tokens put there: no value of the pool's own
    # already held one (else a sentence could not be told apart from a name put back).
    if blob.count(MARK_BYTES) != sum(tokens.used for tokens in all_tokens):
        return None
    names: dict[str, str] = {}
    for tokens in all_tokens:
        names.update({token: name for name, token in tokens.of.items()})
    if any(MARK in name for name in names.values()):
        return None
    if any(name.encode() in blob or name.encode() in classes_blob for name in names.values() if name):
        return None  # a name is also somewhere a token would not replace it
    digest = hashlib.blake2b(digest_size=20)
    digest.update(len(blob).to_bytes(8, "big"))
    digest.update(blob)
    digest.update(classes_blob)
    return PoolShape(
        key=digest.digest(),
        pool=pool_t.of[pool],
        slices=shaped_slices,
        claims=shaped_claims,
        rules=shaped_rules,
        nodes=shaped_nodes,
        names=names,
    )


_UNREAD: dict[bytes, set[tuple[str, str]] | None] = {}


def _unread_strings_of(classes_blob: bytes, classes: Sequence[Json]) -> set[tuple[str, str]] | None:
    """`_unread_strings(classes)`, once per set of classes (`classes_blob`, their JSON): every pool of a
    batch is asked with the same classes."""
    if classes_blob not in _UNREAD:
        if len(_UNREAD) >= 256:
            _UNREAD.clear()
        _UNREAD[classes_blob] = _unread_strings(classes)
    return _UNREAD[classes_blob]


def _unread_strings(classes: Sequence[Json]) -> set[tuple[str, str]] | None:
    """The attributes (domain, name) some class selector reads; None when one may read more (then every
    attribute counts). The availability's claims have no selectors, constraints or derived attributes of
    their own, so what the classes read is all the allocator reads of attributes."""
    read: set[tuple[str, str]] = set()
    for cls in classes:
        selectors = (cls.get("spec") or {}).get("selectors") or []
        if not isinstance(selectors, list):
            return None
        for selector in selectors:
            expression = (
                ((selector or {}).get("cel") or {}).get("expression") if isinstance(selector, dict) else None
            )
            if not isinstance(expression, str):
                return None
            refs = device_refs(expression)
            if refs is None:
                return None
            read.update((domain, name) for field, domain, name in refs if field == "attributes")
    return read


def _blank(device: Any, driver: str, read: set[tuple[str, str]]) -> Any:
    """The device with the values of plain string attributes no class reads left out (a GPU's UUID):
    such a value converts for CEL whatever it is, and nothing else looks at it."""
    attributes = device.get("attributes") if type(device) is dict else None
    if type(attributes) is not dict:
        return device
    blanked: dict[Any, Any] | None = None
    for name, value in attributes.items():
        if (
            type(value) is dict
            and len(value) == 1
            and type(value.get("string")) is str
            and value["string"]
            and isinstance(name, str)
            and split_qualified_name(name, driver) not in read
        ):
            if blanked is None:
                blanked = dict(attributes)
            blanked[name] = _BLANK_STRING
    return device if blanked is None else {**device, "attributes": blanked}


_BLANK_STRING: Json = {"string": ""}


def _inert(rule: Json) -> bool:
    """A rule that parses and whose taint no allocation looks at (effect None or unknown)."""
    try:
        parsed = parse_taint_rule(rule)
    except (AllocationError, TypeError, ValueError, AttributeError):
        return False
    return parsed.taint.effect not in BLOCKING_EFFECTS
