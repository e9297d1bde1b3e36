"""dra.upgrade refuses streams beyond its limits with StreamLimitError (never a RecursionError), and takes
everything up to them through every step: load, convert, schema check, dump."""

from __future__ import annotations

import tracemalloc

import pytest

from dra.upgrade import MAX_ALIAS_NODES, MAX_DEPTH, StreamLimitError, load_documents, upgrade_text

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


def billion_laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 "lol"']
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_it_refuses_a_billion_laughs_before_expanding_it() -> None:
    bomb = billion_laughs()
    assert len(bomb) < 700
    tracemalloc.start()
    try:
        with pytest.raises(StreamLimitError) as raised:
            upgrade_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n---\n" + bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert raised.value.message.startswith(
        f"document 2, line 9: aliases expand to more than {MAX_ALIAS_NODES} nodes"
    )
    assert peak < 5 * 2**20
    with pytest.raises(StreamLimitError):
        load_documents(bomb)


def test_it_expands_a_few_aliases_as_kubectl_does() -> None:
    text = (
        "apiVersion: resource.k8s.io/v1beta1\nkind: DeviceClass\nmetadata:\n  name: gpu.example.com\n"
        "  labels: &labels {team: ml, tier: gpu}\n  annotations: *labels\n"
    )
    result = upgrade_text(text)
    assert not result.failed and result.documents[0].action == "converted"
    (converted,) = load_documents(result.text)
    assert converted["metadata"]["annotations"] == {"team": "ml", "tier": "gpu"}


def test_it_counts_aliases_across_the_whole_stream() -> None:
    # each document's aliases stand for 1,010 nodes (a mapping of 50 keys and 50 values written out ten
    # times): far under the cap alone, over it together
    keys = ", ".join(f"k{n}: v" for n in range(50))
    document = f"a: &a {{{keys}}}\nb: [{', '.join(['*a'] * 10)}]\n"
    assert load_documents(document)[0]["b"][9]["k49"] == "v"
    per_document = 10 * 101
    documents = MAX_ALIAS_NODES // per_document + 1
    with pytest.raises(StreamLimitError, match=f"^document {documents}, line [0-9]+: aliases expand"):
        upgrade_text("---\n".join([document] * documents))


def test_it_refuses_an_alias_inside_the_node_it_names() -> None:
    with pytest.raises(StreamLimitError) as raised:
        upgrade_text("a: 1\n---\nloop: &loop {self: *loop}\n")
    assert raised.value.message == (
        "document 2, line 3: alias *loop is inside the node it names (a recursive structure)"
    )


def test_it_counts_the_levels_an_alias_stands_for() -> None:
    half = MAX_DEPTH // 2
    text = f"a: &deep {'[' * half}x{']' * half}\nb: {'[' * half}*deep{']' * half}\n"
    with pytest.raises(StreamLimitError, match=f"^document 1, line 2: nests more than {MAX_DEPTH} levels"):
        upgrade_text(text)
    fits = f"a: &deep {'[' * (half - 1)}x{']' * (half - 1)}\nb: {'[' * half}*deep{']' * half}\n"
    assert load_documents(fits)[0]["b"] is not None


def test_it_counts_documents_before_parsing_any_when_given_a_limit() -> None:
    with pytest.raises(StreamLimitError) as raised:
        upgrade_text("a: 1\n---\n" + "[" * 5000 + "\n---\n", max_documents=2)
    assert raised.value.message == "too many documents: 3; the limit is 2 documents"
    assert len(upgrade_text("---\n" * 3).documents) == 3  # no limit unless asked (the command)


def test_it_stops_reading_flow_collections_at_the_level_past_the_limit() -> None:
    # ruamel's scanner reads up to 1,024 characters ahead of a `[` (it might start a key), in time
    # quadratic in the nesting: what comes after the 101st `[` must not be read at all
    text = "[" * (MAX_DEPTH + 1) + "@ not a token" + "]" * (MAX_DEPTH + 1)
    with pytest.raises(StreamLimitError, match=f"^document 1, line 1: nests more than {MAX_DEPTH} levels"):
        upgrade_text(text)
