"""dra.upgrade refuses streams beyond its limits with StreamLimitError (never a RecursionError), and takes
everything up to them through every step: load, convert, schema check, dump."""

from __future__ import annotations

import pytest

from dra.upgrade import MAX_DEPTH, StreamLimitError, load_documents, upgrade_text

#: a v1beta1 DeviceClass whose opaque parameters (free-form: the schema does not descend) nest `levels`
#: collections deep in all, counting the 6 levels down to `parameters`
PREFIX = """\
apiVersion: v1
kind: Namespace
metadata: {name: ml}
---
apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  config:
  - opaque:
      driver: gpu.example.com
      parameters: """


def deep_class(levels: int) -> str:
    lists = levels - 6  # below the `{k: …}` mapping, itself the 6th level
    return PREFIX + "{k: " + "[" * lists + "x" + "]" * lists + "}\n"


def test_it_converts_a_document_nested_exactly_to_the_limit() -> None:
    result = upgrade_text(deep_class(MAX_DEPTH))
    assert not result.failed and result.documents[1].action == "converted"
    value = load_documents(result.text)[1]["spec"]["config"][0]["opaque"]["parameters"]["k"]
    lists = 0
    while isinstance(value, list):
        (value,) = value
        lists += 1
    assert (lists, value) == (MAX_DEPTH - 6, "x")


def test_it_refuses_one_level_more_naming_the_document_and_line() -> None:
    with pytest.raises(StreamLimitError) as raised:
        upgrade_text(deep_class(MAX_DEPTH + 1))
    assert raised.value.message == (
        f"document 2, line 12: nests more than {MAX_DEPTH} levels deep (Kubernetes objects nest far less)"
    )


def test_it_refuses_deep_block_mappings_and_flow_sequences_alike() -> None:
    block = "".join("  " * n + f"k{n}:\n" for n in range(MAX_DEPTH + 1)) + "  " * (MAX_DEPTH + 1) + "x\n"
    for text in (block, "[" * 50_000 + "]" * 50_000):
        with pytest.raises(StreamLimitError, match=f"document 1, line [0-9]+: nests more than {MAX_DEPTH}"):
            upgrade_text(text)
        with pytest.raises(StreamLimitError):
            load_documents(text)
