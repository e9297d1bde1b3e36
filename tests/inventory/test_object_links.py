"""Links to objects keep a name whole in a table cell (class "word", dradash_format.WORD_MAX): a claim or pod
reference "namespace/name" longer than one word may break after its slash, and only there."""

from __future__ import annotations

from inventory.templatetags.object_links import claim_link, pod_link

LONGEST = (
    "checkpoint-writer-7f9c4-gpu-extended-resources-2026-12-03-x7k2p"  # 63: as long as generated names get
)


def test_a_reference_that_is_one_word_stays_whole() -> None:
    assert claim_link("ml", "trainer-0-gpu") == (
        '<a class="obj-link claim-link" href="/claims/ml/trainer-0-gpu/"><bdi class="word">ml/trainer-0-gpu</bdi></a>'
    )


def test_a_long_reference_may_break_after_its_slash_only() -> None:
    link = claim_link("ml-team-a", LONGEST)
    assert f'<bdi><span class="word">ml-team-a/</span><span class="word">{LONGEST}</span></bdi>' in link
    assert f'<bdi class="word">{LONGEST}</bdi>' in claim_link("ml-team-a", LONGEST, short=True)


def test_a_string_longer_than_a_word_wraps_where_it_must() -> None:
    assert "<bdi>ml/</bdi>" not in pod_link("ml", "x" * 90)
    assert f"<bdi>ml/{'x' * 90}</bdi>" in pod_link("ml", "x" * 90)
    assert "&lt;b&gt;" in pod_link("<b>", LONGEST)  # escaped, whichever way it is split
