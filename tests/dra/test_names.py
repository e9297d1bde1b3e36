"""dra.names: the name formats of the v1.37 API server, in its words."""

from __future__ import annotations

import pytest

from dra.names import (
    DNS1123_LABEL_MSG,
    DNS1123_SUBDOMAIN_MSG,
    LABEL_VALUE_MSG,
    QUALIFIED_NAME_MSG,
    c_identifier_errors,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
    label_value_errors,
    qualified_name_errors,
)


def test_it_words_the_rules_as_apimachinery_does() -> None:
    assert DNS1123_SUBDOMAIN_MSG == (
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    )
    assert QUALIFIED_NAME_MSG.endswith(
        "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    )


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ("gpu-0", []),
        ("a" * 63, []),
        ("a" * 64, ["must be no more than 63 characters"]),
        ("gpu.0", ["must not contain dots"]),
        ("GPU_0", [DNS1123_LABEL_MSG]),
        ("", [DNS1123_LABEL_MSG]),
        ("-gpu", [DNS1123_LABEL_MSG]),
    ],
)
def test_it_checks_dns_labels(value: str, errors: list[str]) -> None:
    assert dns1123_label_errors(value) == errors
    assert is_dns1123_label(value) is (errors == [])


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ("gpu.example.com", []),
        ("a" * 253, []),
        ("a" * 254, ["must be no more than 253 characters"]),
        ("GPU.example.com", [DNS1123_SUBDOMAIN_MSG]),
        ("gpu..example.com", [DNS1123_SUBDOMAIN_MSG]),
        ("gpu.example.com.", [DNS1123_SUBDOMAIN_MSG]),
        # Python's `$` matches before a final newline; the rule must not
        ("gpu.example.com\n", [DNS1123_SUBDOMAIN_MSG]),
    ],
)
def test_it_checks_dns_subdomains(value: str, errors: list[str]) -> None:
    assert dns1123_subdomain_errors(value) == errors
    assert is_dns1123_subdomain(value) is (errors == [])


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ("app", []),
        ("example.com/maintenance", []),
        ("My.Name_1", []),
        ("-bad", ["name part " + QUALIFIED_NAME_MSG]),
        ("bad key!", ["name part " + QUALIFIED_NAME_MSG]),
        ("example.com/", ["name part must be non-empty", "name part " + QUALIFIED_NAME_MSG]),
        ("/name", ["prefix part must be non-empty"]),
        ("Example.com/name", ["prefix part " + DNS1123_SUBDOMAIN_MSG]),
        ("x" * 64, ["name part must be no more than 63 bytes"]),
        ("é" * 32, ["name part must be no more than 63 bytes", "name part " + QUALIFIED_NAME_MSG]),
        ("a" * 254 + "/n", ["prefix part must be no more than 253 bytes"]),
        ("app\n", ["name part " + QUALIFIED_NAME_MSG]),
    ],
)
def test_it_checks_qualified_names_part_by_part(value: str, errors: list[str]) -> None:
    assert qualified_name_errors(value) == errors
    assert is_qualified_name(value) is (errors == [])


def test_it_refuses_more_than_one_slash_in_a_qualified_name() -> None:
    (error,) = qualified_name_errors("a/b/c")
    assert error.startswith("a valid label key must consist of alphanumeric characters")
    assert error.endswith("with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ("", []),
        ("fw-1.2_b", []),
        ("v" * 64, ["must be no more than 63 bytes"]),
        ("has space", [LABEL_VALUE_MSG]),
        ("-x", [LABEL_VALUE_MSG]),
        ("gold\n", [LABEL_VALUE_MSG]),
    ],
)
def test_it_checks_label_values(value: str, errors: list[str]) -> None:
    assert label_value_errors(value) == errors
    assert is_label_value(value) is (errors == [])


def test_it_checks_c_identifiers() -> None:
    assert c_identifier_errors("memory_GiB") == []
    assert c_identifier_errors("_x") == []
    (error,) = c_identifier_errors("1gpu")
    assert error.startswith("a valid C identifier must start with alphabetic character or '_'")
