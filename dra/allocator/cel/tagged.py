"""How Quantity and Semver values travel through CEL: as order-preserving byte strings.

cel-expr-python cannot carry opaque Python objects. DRA attributes are never ``bytes``, so the CEL
``bytes`` type is free to stand for "a Kubernetes object": ``b"Q…"`` is a Quantity, ``b"V…"`` a Semver
(``b"I…"``/``b"C…"`` are IP and CIDR values, see :mod:`.library_net`).
The encodings are canonical (equal values ⇔ equal bytes), so CEL's own ``==`` is numeric equality for
quantities and precedence equality for versions, as upstream ``Equal`` is; and they sort like the
values, so comparisons need no decoding. Passing bytes to a Python overload is also several times
cheaper than passing a map.

Quantity (exact nanos *n*): ``Qo`` for zero; ``Qp`` + 5-digit length + digits for *n* > 0;
``Qn`` + (99999 − length) + nines' complement of the digits for *n* < 0.
Semver: ``V`` + 20-digit major, minor, patch, then ``~`` for a release, or for each pre-release
identifier ``0`` + 20-digit number (numeric) or ``1`` + text (alphanumeric), followed by ``!``.
(``!`` sorts below every identifier character and ``~`` above, giving semver 2.0.0 precedence.)
"""

from __future__ import annotations

import functools

from dra.quantity import Quantity

from .semver import Semver

# The function that `string(<bytes>)` calls are routed to, so Kubernetes values convert properly.
TAGGED_STRING_FUNCTION = "kubernetes.string"
# The check the AST rewrite puts in front of `a == b` when `a` may be a Kubernetes value (see rewrite.py).
EQUALITY_GUARD_FUNCTION = "kubernetes.equalityGuard"
# What the engine wraps comprehension ranges in to name a non-iterable range as cel-go does (see engine.py).
ITERABLE_GUARD_FUNCTION = "kubernetes.iterableGuard"
QUANTITY_PREFIX = b"Q"
SEMVER_PREFIX = b"V"
_COMPLEMENT = bytes.maketrans(b"0123456789", b"9876543210")


class TagError(ValueError):
    """A CEL value that is not the Quantity or Semver a function expected."""


# cel-expr-python hands CEL bytes to Python functions as ``bytearray``; both forms are accepted.
def is_quantity(value: object) -> bool:
    return isinstance(value, bytes | bytearray) and value[:1] == QUANTITY_PREFIX


def is_semver(value: object) -> bool:
    return isinstance(value, bytes | bytearray) and value[:1] == SEMVER_PREFIX


def encode_quantity(value: Quantity) -> bytes:
    nanos = value.nano_value()
    if nanos == 0:
        return b"Qo"
    digits = str(abs(nanos)).encode("ascii")
    if nanos > 0:
        return b"Qp" + b"%05d" % len(digits) + digits
    return b"Qn" + b"%05d" % (99999 - len(digits)) + digits.translate(_COMPLEMENT)


def decode_quantity(value: bytes | bytearray) -> Quantity:
    return _decode_quantity(bytes(value))


@functools.lru_cache(maxsize=8192)
def _decode_quantity(value: bytes) -> Quantity:
    if not is_quantity(value):
        raise TagError(f"no such overload: expected a Quantity, got {describe(value)}")
    sign = value[1:2]
    if sign == b"o":
        return Quantity(0)
    digits = value[7:]
    if sign == b"n":
        return Quantity(-int(digits.translate(_COMPLEMENT)))
    return Quantity(int(digits))


def encode_semver(value: Semver) -> bytes:
    core = b"V%020d%020d%020d" % (value.major, value.minor, value.patch)
    if not value.prerelease:
        return core + b"~"
    parts = []
    for identifier in value.prerelease:
        if identifier.isdigit():
            parts.append(b"0%020d!" % int(identifier))
        else:
            parts.append(b"1" + identifier.encode("ascii") + b"!")
    return core + b"".join(parts)


def decode_semver(value: bytes | bytearray) -> Semver:
    return _decode_semver(bytes(value))


@functools.lru_cache(maxsize=8192)
def _decode_semver(value: bytes) -> Semver:
    if not is_semver(value):
        raise TagError(f"no such overload: expected a Semver, got {describe(value)}")
    major, minor, patch = int(value[1:21]), int(value[21:41]), int(value[41:61])
    rest = value[61:]
    prerelease: tuple[str, ...] = ()
    if rest != b"~":
        prerelease = tuple(
            str(int(part[1:])) if part[:1] == b"0" else part[1:].decode("ascii")
            for part in rest.split(b"!")[:-1]
        )
    return Semver(major, minor, patch, prerelease)


def describe(value: object) -> str:
    if is_quantity(value):
        return "Quantity"
    if is_semver(value):
        return "Semver"
    if isinstance(value, bytes | bytearray) and value[:1] in (b"I", b"C"):
        return "IP" if value[:1] == b"I" else "CIDR"
    return {
        dict: "map",
        list: "list",
        str: "string",
        bytes: "bytes",
        bool: "bool",
        int: "int",
        float: "double",
    }.get(type(value), type(value).__name__)
