"""The one way to show cluster strings ({{ v|k8s }}), times ({% when t %}) and the field an error is about
({% field_name e %}) on every page."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.template import Context, Template
from django.utils import timezone

from dradash.templatetags.dradash_format import WORD_MAX, relative


def render(source: str, **context: object) -> str:
    return Template(source).render(Context(context))


def test_it_isolates_and_escapes_a_cluster_string_without_a_load_tag() -> None:
    html = render("{{ v|k8s }}", v="<script>x</script> \u202eevil")
    assert html == '<bdi class="k8s">&lt;script&gt;x&lt;/script&gt; \u202eevil</bdi>'


def test_it_caps_a_long_string() -> None:
    assert render("{{ v|k8s:10 }}", v="a b" * 50) == '<bdi class="k8s">' + "a ba ba b…</bdi>"


def test_it_marks_a_word_that_a_table_cell_keeps_whole() -> None:
    """A name ("worker-0006") is a word: a table cell does not break it at its hyphens; a longer string
    without spaces, or text with spaces, wraps where it must."""
    assert render("{{ v|k8s }}", v="worker-0006") == '<bdi class="k8s word">worker-0006</bdi>'
    assert render("{{ v|k8s }}", v="x" * WORD_MAX) == f'<bdi class="k8s word">{"x" * WORD_MAX}</bdi>'
    assert render("{{ v|k8s }}", v="x" * (WORD_MAX + 1)) == f'<bdi class="k8s">{"x" * (WORD_MAX + 1)}</bdi>'
    assert render("{{ v|k8s }}", v="0/3 nodes") == '<bdi class="k8s">0/3 nodes</bdi>'
    assert render("{{ v|k8s }}", v="") == '<bdi class="k8s"></bdi>'


def test_it_shows_a_time_relative_with_the_absolute_utc_time_on_hover() -> None:
    at = timezone.now() - timedelta(minutes=3, seconds=10)
    html = render("{% when t %}", t=at)
    iso = at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert html == (
        f'<time datetime="{iso}" title="{at.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC" data-time="relative">'
        "3 min ago</time>"
    )


def test_it_reads_rfc3339_strings_from_the_cluster() -> None:
    html = render('{% when t "absolute" %}', t="2026-11-29T17:49:09Z")
    assert 'datetime="2026-11-29T17:49:09Z"' in html and ">2026-11-29 17:49:09 UTC</time>" in html


@pytest.mark.parametrize("value", [None, ""])
def test_it_shows_a_dash_for_no_time(value: object) -> None:
    assert render("{% when t %}", t=value) == '<span class="muted">—</span>'


def test_it_shows_an_unparseable_time_as_escaped_text() -> None:
    assert render("{% when t %}", t="<b>soon</b>") == '<span class="muted">&lt;b&gt;soon&lt;/b&gt;</span>'


@pytest.mark.parametrize(
    ("seconds", "words"),
    [(2, "just now"), (42, "42 s ago"), (190, "3 min ago"), (5 * 3600 + 1, "5 h ago"), (2 * 86400, "2 d ago"),
     (-240, "in 4 min")],
)  # fmt: skip
def test_it_uses_the_same_words_as_the_browser_script(seconds: int, words: str) -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    assert relative(now - timedelta(seconds=seconds), now) == words


def test_delay_says_how_long_after_not_when() -> None:
    from dradash.templatetags.dradash_format import delay

    assert [delay(s) for s in (0, 0.0, 0.4, 45, 300, 90, 5400, 90061, None)] == [
        "at once", "at once", "after 1 s", "after 45 s", "after 5 min", "after 1 min 30 s", "after 1 h 30 min",
        "after 1 d 1 h", "—",
    ]  # fmt: skip


def test_it_names_an_errors_field_by_its_label_then_its_path_escaped() -> None:
    from dradash.fieldnames import shown_errors

    labels = {"filters": "Find devices", "filters.state": "Allocation", "devices": "Devices"}
    errors = shown_errors(
        {"filters.state": ["bad", "choice"], "devices[2].pool": ["x"], "<b>": ["y"]}, labels
    )
    assert [(e.label, e.field, e.message) for e in errors] == [
        ("Allocation", "filters.state", "bad choice"),
        ("Devices", "devices[2].pool", "x"),
        ("", "<b>", "y"),
    ]
    html = render("{% for e in errors %}{% field_name e %};{% endfor %}", errors=errors)
    assert html == (
        "<strong>Allocation</strong> (<code>filters.state</code>);"
        "<strong>Devices</strong> (<code>devices[2].pool</code>);<code>&lt;b&gt;</code>;"
    )
