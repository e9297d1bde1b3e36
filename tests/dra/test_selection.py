"""dra.selection: DeviceTaintRule selectors, node selectors and label selectors."""

from __future__ import annotations

import pytest

from dra.names import DNS1123_SUBDOMAIN_MSG, LABEL_VALUE_MSG, QUALIFIED_NAME_MSG
from dra.selection import (
    SelectorError,
    device_selector,
    label_selector,
    label_selector_matches,
    node_selector_matches,
    parse_label_selector,
    parse_node_selector,
    rule_selects,
)

NODE = {"metadata": {"name": "worker-1", "labels": {"zone": "a", "gpus": "8"}}}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ({}, True),  # an empty selector selects every device
        (None, False),  # an absent selector selects none
        ({"driver": "gpu.example.com"}, True),
        ({"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}, True),
        ({"driver": "gpu.example.com", "pool": "node-2"}, False),
        ({"driver": "", "pool": "node-1"}, True),  # an empty string counts as not given
    ],
)
def test_it_selects_devices_like_a_device_taint_rule(selector: dict | None, expected: bool) -> None:
    spec = {} if selector is None else {"deviceSelector": selector}
    assert rule_selects({"spec": spec}, "gpu.example.com", "node-1", "gpu-0") is expected
    assert device_selector(selector).selects("gpu.example.com", "node-1", "gpu-0") is expected


def term(*expressions: dict, fields: list | None = None) -> dict:
    t: dict = {"matchExpressions": list(expressions)}
    if fields is not None:
        t["matchFields"] = fields
    return {"nodeSelectorTerms": [t]}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (None, True),
        (term({"key": "zone", "operator": "In", "values": ["a", "b"]}), True),
        (term({"key": "zone", "operator": "NotIn", "values": ["a"]}), False),
        (term({"key": "missing", "operator": "NotIn", "values": ["a"]}), True),
        (term({"key": "zone", "operator": "Exists"}), True),
        (term({"key": "zone", "operator": "DoesNotExist"}), False),
        (term({"key": "gpus", "operator": "Gt", "values": ["4"]}), True),
        (term({"key": "gpus", "operator": "Lt", "values": ["4"]}), False),
        (term(fields=[{"key": "metadata.name", "operator": "In", "values": ["worker-1"]}]), True),
        (term(fields=[{"key": "metadata.name", "operator": "NotIn", "values": ["worker-1"]}]), False),
        ({"nodeSelectorTerms": [{}]}, False),  # an empty term matches nothing
        (
            {"nodeSelectorTerms": [{}, term({"key": "zone", "operator": "Exists"})["nodeSelectorTerms"][0]]},
            True,
        ),
    ],
)
def test_it_matches_node_selectors(selector: dict | None, expected: bool) -> None:
    assert node_selector_matches(selector, NODE) is expected


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        (term({"key": "zone", "operator": "Near", "values": ["a"]}), 'Unsupported value: "Near"'),
        (term({"key": "zone", "operator": "In", "values": []}), "values set can't be empty"),
        (term({"key": "zone", "operator": "Exists", "values": ["a"]}), "values set must be empty"),
        (term({"key": "gpus", "operator": "Gt", "values": ["x"]}), "must be an integer"),
        (
            term(fields=[{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]),
            "must have one element",
        ),
        (term(fields=[{"key": "metadata.name", "operator": "Exists"}]), "Unsupported value"),
    ],
)
def test_it_refuses_node_selectors_upstream_cannot_parse(selector: dict, message: str) -> None:
    with pytest.raises(SelectorError, match=message):
        parse_node_selector(selector)


def test_it_matches_label_selectors_with_pdb_semantics() -> None:
    labels = {"app": "trainer", "tier": "gpu"}
    assert label_selector_matches({}, labels) is True
    assert label_selector_matches(None, labels) is False
    assert label_selector_matches({"matchLabels": {"app": "trainer"}}, labels) is True
    assert label_selector_matches({"matchLabels": {"app": "other"}}, labels) is False
    expr = {
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["gpu"]},
            {"key": "x", "operator": "DoesNotExist"},
        ]
    }
    assert label_selector_matches(expr, labels) is True


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("app=trainer", {"app": "trainer"}, True),
        ("app!=trainer", {"app": "trainer"}, False),
        ("app in (a, trainer)", {"app": "trainer"}, True),
        ("app notin (trainer)", {}, True),
        ("!app", {}, True),
        ("app", {}, False),
        ("gpus>4,app==x", {"gpus": "8", "app": "x"}, True),
    ],
)
def test_it_parses_the_string_form_of_label_selectors(text: str, labels: dict, expected: bool) -> None:
    assert parse_label_selector(text).matches(labels) is expected


def test_it_refuses_malformed_label_selector_strings() -> None:
    with pytest.raises(SelectorError, match="name part must consist"):
        parse_label_selector("-bad=x")


def test_it_reads_an_empty_value_set_as_the_empty_value() -> None:
    """labels.Parse turns `()` into the set holding "" (its parseValues), so it selects empty labels."""
    selector = parse_label_selector("app in ()")
    assert selector.matches({"app": ""}) is True
    assert selector.matches({"app": "x"}) is False


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # the parser checks a key itself, with no field path: Go prints the nil path as <nil>
        (
            "-bad=x",
            'unable to parse requirement: <nil>: Invalid value: "-bad": name part ' + QUALIFIED_NAME_MSG,
        ),
        (
            "tier=has@sign",
            'unable to parse requirement: values[0][tier]: Invalid value: "has@sign": ' + LABEL_VALUE_MSG,
        ),
        # the lexer ends a word at whitespace or = ! ( ) , > <; what follows is the next token
        ("tier=has space", "found 'space', expected: ',' or 'end of string'"),
        ("tier=a=b", "found '=', expected: ',' or 'end of string'"),
        ("tier gpu", "unable to parse requirement: found 'gpu', expected: in, notin, =, ==, !=, gt, lt"),
        ("tier in (a", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("tier notin a", "unable to parse requirement: found 'a' expected: '('"),
        ("a,,b", "found ',', expected: identifier after ','"),
        ("=a", "found '=', expected: !, identifier, or 'end of string'"),
        (
            "gpus>x",
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        # the prefix of a key is a DNS subdomain (a looser pattern once let this through)
        (
            "Example_com/app=x",
            'unable to parse requirement: <nil>: Invalid value: "Example_com/app": prefix part '
            + DNS1123_SUBDOMAIN_MSG,
        ),
    ],
)
def test_it_words_label_selector_errors_as_labels_parse_does(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as caught:
        parse_label_selector(text)
    assert str(caught.value) == message


def test_it_reads_match_labels_that_are_no_map_as_none_given() -> None:
    # a DaemonSet's `matchLabels: "x"` reaches the selector before validation refuses it: no crash
    assert label_selector({"matchLabels": "x"}).matches({}) is True
