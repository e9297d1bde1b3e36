"""A minimal protobuf wire-format reader/writer, enough to walk and edit a serialized ``cel.expr.CheckedExpr``.

cel-expr-python hands out the checked AST only as serialized bytes (``Expression.serialize()``) and
accepts it back through ``Env.deserialize``; the ``protobuf`` package is not a dependency here, so the
few messages we touch are read field by field. Unknown fields are kept verbatim.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

VARINT = 0
FIXED64 = 1
LENGTH = 2
FIXED32 = 5


@dataclass
class Field:
    number: int
    wire_type: int
    value: int | bytes


@dataclass
class Message:
    fields: list[Field] = field(default_factory=list)

    def get_all(self, number: int) -> list[Field]:
        return [f for f in self.fields if f.number == number]

    def first(self, number: int) -> Field | None:
        for f in self.fields:
            if f.number == number:
                return f
        return None

    def bytes_of(self, number: int) -> bytes | None:
        f = self.first(number)
        return f.value if f is not None and isinstance(f.value, bytes) else None

    def int_of(self, number: int) -> int | None:
        f = self.first(number)
        return f.value if f is not None and isinstance(f.value, int) else None

    def message_of(self, number: int) -> Message | None:
        """The nested message in field ``number``, decoded once and shared: treat it as read-only."""
        raw = self.bytes_of(number)
        return decode_shared(raw) if raw is not None else None

    def string_of(self, number: int) -> str | None:
        raw = self.bytes_of(number)
        return raw.decode("utf-8") if raw is not None else None


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _write_varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        bits = value & 0x7F
        value >>= 7
        if value:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


def decode(data: bytes) -> Message:
    message = Message()
    pos = 0
    end = len(data)
    while pos < end:
        key, pos = read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        value: int | bytes
        if wire_type == VARINT:
            value, pos = read_varint(data, pos)
        elif wire_type == FIXED64:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire_type == LENGTH:
            length, pos = read_varint(data, pos)
            value, pos = data[pos : pos + length], pos + length
        elif wire_type == FIXED32:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire_type}")
        message.fields.append(Field(number, wire_type, value))
    return message


@functools.lru_cache(maxsize=4096)
def decode_shared(data: bytes) -> Message:
    """``decode`` memoised by content, for read-only use (the AST walk looks at the same nodes often)."""
    return decode(data)


def encode(message: Message) -> bytes:
    out = bytearray()
    for f in message.fields:
        out += _write_varint((f.number << 3) | f.wire_type)
        if f.wire_type == VARINT:
            assert isinstance(f.value, int)
            out += _write_varint(f.value)
        else:
            assert isinstance(f.value, bytes)
            if f.wire_type == LENGTH:
                out += _write_varint(len(f.value))
            out += f.value
    return bytes(out)


def length_field(number: int, payload: bytes | Message | str) -> Field:
    if isinstance(payload, Message):
        payload = encode(payload)
    elif isinstance(payload, str):
        payload = payload.encode("utf-8")
    return Field(number, LENGTH, payload)


def varint_field(number: int, value: int) -> Field:
    return Field(number, VARINT, value)
