"""Go's encoding/json words for a body that is no JSON, as kube-apiserver answers a PATCH it cannot decode.

`syntax_error(body)` is what Go's scanner (encoding/json/scanner.go, forked as sigs.k8s.io/json) says of the
first byte it cannot take — `invalid character 'b' looking for beginning of object key string`, `unexpected end
of JSON input` — or None when the body is JSON. `type_name(value)` names a decoded value as Go's
UnmarshalTypeError does (`cannot unmarshal array into Go value of type …`).
"""

from __future__ import annotations

from typing import Any

_SPACE = b" \t\n\r"
END_OF_INPUT = "unexpected end of JSON input"


class _Syntax(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _quote_char(byte: int) -> str:
    """Go's quoteChar: the byte as a quoted character literal."""
    if byte == ord("'"):
        return "'\\''"
    if byte == ord('"'):
        return "'\"'"
    char = chr(byte)
    escapes = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f",
               "\v": "\\v"}  # fmt: skip
    if char in escapes:
        return f"'{escapes[char]}'"
    if byte < 0x20 or byte == 0x7F:
        return f"'\\x{byte:02x}'"
    return f"'{char}'"


class _Scanner:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def _peek(self) -> int:
        if self.at >= len(self.data):
            raise _Syntax(END_OF_INPUT)
        return self.data[self.at]

    def _fail(self, context: str) -> _Syntax:
        return _Syntax(f"invalid character {_quote_char(self.data[self.at])} {context}")

    def _skip_space(self) -> None:
        while self.at < len(self.data) and self.data[self.at] in _SPACE:
            self.at += 1

    def document(self) -> None:
        self._skip_space()
        self.value()
        self._skip_space()
        if self.at < len(self.data):
            raise self._fail("after top-level value")

    def value(self) -> None:
        self._skip_space()
        byte = self._peek()
        if byte == ord("{"):
            self._object()
        elif byte == ord("["):
            self._array()
        elif byte == ord('"'):
            self._string()
        elif byte == ord("-") or ord("0") <= byte <= ord("9"):
            self._number()
        elif byte in b"tfn":
            self._literal({ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"}[byte])
        else:
            raise self._fail("looking for beginning of value")

    def _object(self) -> None:
        self.at += 1
        self._skip_space()
        if self._peek() == ord("}"):
            self.at += 1
            return
        while True:
            self._skip_space()
            if self._peek() != ord('"'):
                raise self._fail("looking for beginning of object key string")
            self._string()
            self._skip_space()
            if self._peek() != ord(":"):
                raise self._fail("after object key")
            self.at += 1
            self.value()
            self._skip_space()
            byte = self._peek()
            if byte == ord("}"):
                self.at += 1
                return
            if byte != ord(","):
                raise self._fail("after object key:value pair")
            self.at += 1

    def _array(self) -> None:
        self.at += 1
        self._skip_space()
        if self._peek() == ord("]"):
            self.at += 1
            return
        while True:
            self.value()
            self._skip_space()
            byte = self._peek()
            if byte == ord("]"):
                self.at += 1
                return
            if byte != ord(","):
                raise self._fail("after array element")
            self.at += 1

    def _string(self) -> None:
        self.at += 1
        while True:
            byte = self._peek()
            if byte == ord('"'):
                self.at += 1
                return
            if byte < 0x20:
                raise self._fail("in string literal")
            if byte == ord("\\"):
                self.at += 1
                escape = self._peek()
                if escape == ord("u"):
                    for _ in range(4):
                        self.at += 1
                        if self._peek() not in b"0123456789abcdefABCDEF":
                            raise self._fail("in \\u hexadecimal character escape")
                elif escape not in b'"\\/bfnrt':
                    raise self._fail("in string escape code")
            self.at += 1

    def _digits(self) -> None:
        while self.at < len(self.data) and ord("0") <= self.data[self.at] <= ord("9"):
            self.at += 1

    def _number(self) -> None:
        if self.data[self.at] == ord("-"):
            self.at += 1
            if not ord("0") <= self._peek() <= ord("9"):
                raise self._fail("in numeric literal")
        if self.data[self.at] == ord("0"):
            self.at += 1
        else:
            self._digits()
        if self.at < len(self.data) and self.data[self.at] == ord("."):
            self.at += 1
            if not ord("0") <= self._peek() <= ord("9"):
                raise self._fail("after decimal point in numeric literal")
            self._digits()
        if self.at < len(self.data) and self.data[self.at] in b"eE":
            self.at += 1
            if self._peek() in b"+-":
                self.at += 1
            if not ord("0") <= self._peek() <= ord("9"):
                raise self._fail("in exponent of numeric literal")
            self._digits()

    def _literal(self, word: bytes) -> None:
        for expected in word:
            if self._peek() != expected:
                raise self._fail(f"in literal {word.decode()} (expecting {_quote_char(expected)})")
            self.at += 1


def syntax_error(body: bytes) -> str | None:
    """Go's message for the first syntax error in `body`, or None when it is JSON."""
    try:
        _Scanner(body).document()
    except _Syntax as error:
        return error.message
    return None


def type_name(value: Any) -> str:
    """What Go's UnmarshalTypeError calls a JSON value: object, array, string, number, bool."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    return "number"
