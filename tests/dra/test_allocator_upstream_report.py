"""The figure of ``python -m tests.dra.upstream_report``, kept true by the suite."""

from __future__ import annotations

from tests.dra.upstream_report import report, upstream_names


def test_it_ports_every_case_of_upstreams_table_exactly_once() -> None:
    r = report()
    assert r.total == len(upstream_names()) == 223
    assert (r.missing, r.duplicated, r.unknown) == ([], [], [])


def test_it_gives_upstreams_answer_on_every_ported_case_but_the_documented_differences() -> None:
    r = report()
    assert r.failing == []
    assert len(r.matching) + len(r.deliberate) == r.total
    assert r.steps_differing == []
