"""A follow-on sentence stands or falls with the unsupported sentence before it."""

from __future__ import annotations

from reader.audit.decided import GUARD, VERIFIER
from reader.audit.loop import SUPPORTED, UNSUPPORTED, AuditResult, SentenceResult
from reader.deepread.follow_on import RESTS_ON, follow_ons
from reader.text.split import sentence_spans, split_sentences

TEXT = """## Weaknesses
The paper does not compare REALM with its baselines. This limits the ability to evaluate REALM. \
It reports a t-test.

## Threats to validity
This setting uses nine million pages. These pages come from one crawl.
"""
SPANS = sentence_spans(TEXT)


def audited(flagged: set[int]) -> AuditResult:
    sentences = split_sentences(TEXT)
    return AuditResult(
        [
            SentenceResult(s, UNSUPPORTED if i in flagged else SUPPORTED, "YES", decided_by=VERIFIER)
            for i, s in enumerate(sentences)
        ]
    )


def test_a_follow_on_of_an_unsupported_sentence_is_unsupported_under_its_heading_only():
    result = follow_ons(TEXT, SPANS, audited({0}))
    verdicts = [(s.text[:20], s.verdict) for s in result.sentences]
    assert verdicts == [
        ("The paper does not c", UNSUPPORTED),
        ("This limits the abil", UNSUPPORTED),
        ("It reports a t-test.", SUPPORTED),  # "It" is not taken as a follow-on
        ("This setting uses ni", SUPPORTED),  # the first under its heading follows nothing
        ("These pages come fro", SUPPORTED),
    ]
    follow_on = result.sentences[1]
    assert follow_on.decided_by == GUARD and follow_on.follow_on
    assert not any(s.follow_on for i, s in enumerate(result.sentences) if i != 1)
    assert follow_on.reasons[-1].startswith(f"{RESTS_ON}: “The paper does not compare")
    # a chain follows the first: the second follow-on rests on the one before it
    chained = follow_ons(TEXT, SPANS, audited({3}))
    assert [s.verdict for s in chained.sentences][3:] == [UNSUPPORTED, UNSUPPORTED]


def test_nothing_changes_when_nothing_before_is_unsupported():
    assert follow_ons(TEXT, SPANS, audited(set())).sentences == audited(set()).sentences


def test_nothing_changes_when_a_sentence_stands_on_a_heading_line():
    """A "**Heading**:" line is a heading of the document and a sentence of its split: the
    sentences do not line up with the headings."""
    text = "**Weaknesses**:\nThe paper does not compare REALM with its baselines. This limits it.\n"
    spans = sentence_spans(text)
    result = AuditResult(
        [SentenceResult(text[s:e], UNSUPPORTED, "NO", decided_by=VERIFIER) for s, e in spans[:2]]
        + [SentenceResult(text[s:e], SUPPORTED, "YES", decided_by=VERIFIER) for s, e in spans[2:]]
    )
    assert len(spans) == 3 and follow_ons(text, spans, result) is result


def test_a_sentence_asking_for_support_of_the_claim_before_it_is_a_follow_on():
    text = (
        "## Weaknesses\nThe authors compare against human interaction as a baseline. "
        "The authors do not provide evidence to support this claim. However, these results hold. "
        "The authors assume X, but this assumption is not stated.\n"
    )
    spans = sentence_spans(text)
    result = AuditResult(
        [SentenceResult(text[s:e], UNSUPPORTED, "NO", decided_by=VERIFIER) for s, e in spans[:1]]
        + [SentenceResult(text[s:e], SUPPORTED, "YES", decided_by=VERIFIER) for s, e in spans[1:]]
    )
    verdicts = [s.verdict for s in follow_ons(text, spans, result).sentences]
    # "this assumption" of its own clause is no follow-on
    assert verdicts == [UNSUPPORTED, UNSUPPORTED, UNSUPPORTED, SUPPORTED]
