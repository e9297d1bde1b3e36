"""Moving fields inside a parsed manifest without losing what the YAML library attached to them.

The rules work on any mutable mapping: plain dicts (API JSON) or ruamel.yaml's round-trip maps. A
round-trip map keeps the comments of each key in ``.ca.items[key]`` and full-line comments carry
their indentation inside the token text, so a field moved one level deeper (into ``exactly``) or one
level up (out of ``basic``) takes its comments along, re-indented by the same amount. Duck-typed:
this module never imports ruamel.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

Tree = MutableMapping[str, Any]


def new_map_like(node: Tree) -> Tree:
    """An empty mapping of the same type (a round-trip map stays a round-trip map)."""
    made: Tree = type(node)()
    return made


def prefer_flow(node: Tree) -> None:
    """Ask the dumper to write a small new mapping inline (`{value: 80Gi}`); plain dicts ignore it."""
    attributes = getattr(node, "fa", None)
    if attributes is not None:
        attributes.set_flow_style()


def insert_at(node: Tree, position: int, key: str, value: Any) -> None:
    """Put `key` at `position` in the key order (ruamel maps insert in place; dicts are rebuilt)."""
    insert = getattr(node, "insert", None)
    if callable(insert):
        insert(position, key, value)
        return
    tail = [(k, node.pop(k)) for k in list(node)[position:]]
    node[key] = value
    for k, v in tail:
        node[k] = v


def move_key(source: Tree, target: Tree, key: str, *, shift: int, position: int | None = None) -> None:
    """Move `source[key]` to `target` (at `position`, else the end) with its comments, indented `shift` more."""
    value = source.pop(key)
    if position is None:
        target[key] = value
    else:
        insert_at(target, position, key, value)
    source_comments = getattr(source, "ca", None)
    target_comments = getattr(target, "ca", None)
    if source_comments is not None and target_comments is not None:
        attached = source_comments.items.pop(key, None)
        if attached is not None:
            _shift_all(attached, shift)
            target_comments.items[key] = attached
    shift_comments(value, shift)


def comment_of(node: Tree, key: str) -> Any:
    """Detach and return what is attached to `key` (None for plain dicts or no comment)."""
    comments = getattr(node, "ca", None)
    return None if comments is None else comments.items.pop(key, None)


def attach_comment(node: Tree, key: str, attached: Any, *, shift: int) -> None:
    """Attach comments taken with `comment_of` after `key` of `node` (after what `key` already has)."""
    comments = getattr(node, "ca", None)
    if attached is None or comments is None:
        return
    _shift_all(attached, shift)
    existing = comments.items.get(key)
    if existing is None:
        comments.items[key] = attached
        return
    for slot, token in enumerate(attached):
        if token is None:
            continue
        if existing[slot] is None:
            existing[slot] = token
        elif hasattr(existing[slot], "value") and hasattr(token, "value"):
            existing[slot].value = existing[slot].value.rstrip("\n") + "\n" + token.value.lstrip("\n")


def leading_comment_lines(node: Any) -> list[str]:
    """The comment lines before a mapping's first key, each with its own indentation, detached."""
    comments = getattr(node, "ca", None)
    start = getattr(comments, "comment", None)
    if not start or len(start) < 2 or not start[1]:
        return []
    lines = [" " * (getattr(token, "column", 0) or 0) + str(token.value).rstrip("\n") for token in start[1]]
    start[1] = []
    return lines


def add_comment_lines(node: Tree, key: str, lines: list[str], *, shift: int) -> None:
    """Full-line comments after `key: value` of `node` (where ruamel keeps comments before the next key)."""
    comments = getattr(node, "ca", None)
    if comments is None or not lines:
        return
    text = "".join("\n" + _reindent("\n" + line, shift)[1:] for line in lines) + "\n"
    slots = comments.items.setdefault(key, [None, None, None, None])
    token = slots[2]
    if token is None:
        from ruamel.yaml.error import CommentMark
        from ruamel.yaml.tokens import CommentToken

        slots[2] = CommentToken(text, CommentMark(0), None)
    else:
        token.value = token.value.rstrip("\n") + text


def shift_comments(node: Any, shift: int) -> None:
    """Re-indent every comment inside a moved subtree."""
    if shift == 0:
        return
    comments = getattr(node, "ca", None)
    if comments is not None:
        for attached in comments.items.values():
            _shift_all(attached, shift)
        _shift_all(comments.comment, shift)
        _shift_all(comments.end, shift)
    if isinstance(node, MutableMapping):
        for value in node.values():
            shift_comments(value, shift)
    elif isinstance(node, list):
        for value in node:
            shift_comments(value, shift)


def _shift_all(attached: Any, shift: int) -> None:
    if attached is None:
        return
    if isinstance(attached, list):
        for item in attached:
            _shift_all(item, shift)
        return
    value = getattr(attached, "value", None)
    if not isinstance(value, str):
        return
    attached.value = _reindent(value, shift)
    column = getattr(attached, "column", None)
    if isinstance(column, int) and value.startswith("#"):
        # an end-of-line comment: keep it the same distance from the (moved) value
        attached.column = max(0, column + shift)


def _reindent(text: str, shift: int) -> str:
    lines = text.split("\n")
    out = [lines[0]]
    for line in lines[1:]:
        stripped = line.lstrip(" ")
        if stripped.startswith("#"):
            indent = max(0, len(line) - len(stripped) + shift)
            line = " " * indent + stripped
        out.append(line)
    return "\n".join(out)


def remove_key(node: Tree, key: str) -> None:
    """Delete `node[key]`; the comment lines that followed its value now follow the key before it."""
    keys = list(node)
    attached = comment_of(node, key)
    del node[key]
    if attached is None or len(attached) < 3 or attached[2] is None:
        return
    position = keys.index(key)
    if position > 0:
        # only the full-line comments after the value travel, not an end-of-line comment about it
        text = str(getattr(attached[2], "value", ""))
        lines = [line for line in text.split("\n")[1:] if line.strip()]
        if lines:
            add_comment_lines(node, keys[position - 1], lines, shift=0)


def insert_before_comments(node: Tree, position: int, key: str, value: Any) -> None:
    """`insert_at`, but the comment lines between the previous field and the next stay above the next
    (ruamel keeps them on the previous field, so the new field would come between them and their field)."""
    keys = list(node)
    insert_at(node, position, key, value)
    comments = getattr(node, "ca", None)
    if comments is None or position == 0 or position > len(keys):
        return
    slots = comments.items.get(keys[position - 1])
    token = slots[2] if slots is not None and len(slots) > 2 else None
    text = getattr(token, "value", None)
    if token is None or not isinstance(text, str) or "\n" not in text.rstrip("\n"):
        return
    head, tail = text.split("\n", 1)
    if not tail.strip():
        return
    if head.strip():
        token.value = head + "\n"
    else:
        slots[2] = None
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    comments.items[key] = [None, None, CommentToken("\n" + tail, CommentMark(0), None), None]
