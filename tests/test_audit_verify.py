"""The verify prompt and its lenient parser (table-driven)."""

import pytest

from reader.audit.verify import EvidenceRef, build_prompt, parse_answers


@pytest.mark.parametrize(
    "reply,expected",
    [
        ("[1] YES\n[2] NO\n[3] YES", ["YES", "NO", "YES"]),
        ("- [1] YES\n- **[2] NO**\n* [3] yes", ["YES", "NO", "YES"]),  # bullets, bold, lower case
        ("[1] YES, the passage states it.\n[2] NO - not mentioned\n[3] Yes because of Table 2",
         ["YES", "NO", "YES"]),  # explanations
        ("[1] YES\n[3] NO", ["YES", None, "NO"]),  # a missing line
        ("Here are my answers:\n[1] NO\n[2] YES\n[3] YES\n[4] NO\nHope this helps.",
         ["NO", "YES", "YES"]),  # extra lines and an out-of-range claim
        ("1. no\n2) yes\nClaim 3: NO", ["NO", "YES", "NO"]),
        ("YES\nNO\nYES", ["YES", "NO", "YES"]),  # unnumbered, in order
        ("[2] NO\n[1] YES\n[2] YES", ["YES", "NO", None]),  # first answer wins
        ("[1] The claim is not supported.\n[2] supported", ["NO", "YES", None]),
        ("I cannot determine this.\n¯\\_(ツ)_/¯", [None, None, None]),  # garbage: all unanswered
        ("", [None, None, None]),
    ],
)
def test_parse_variants(reply, expected):
    assert parse_answers(reply, 3) == expected


def test_prompt_numbers_claims_and_shows_evidence():
    prompt = build_prompt(
        ["It works.", "It is fast."],
        [EvidenceRef(7, 3, 4, "We show it works on 3 datasets.")],
    )
    assert "[1] It works." in prompt and "[2] It is fast." in prompt
    assert "We show it works on 3 datasets." in prompt
    assert "(p. 3-4)" in prompt
    assert "`[n] YES` or `[n] NO`, no explanations" in prompt


def test_prompt_without_evidence_says_so():
    prompt = build_prompt(["It works."], [])
    assert "No evidence was found" in prompt
    assert "answer NO" in prompt
