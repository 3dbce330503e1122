"""A sentence that only draws a consequence from the one before it ("This limits the ability to
evaluate the effectiveness of REALM …" after "the paper does not include any comparison between
REALM and its baselines") stands or falls with it: after a sentence the audit found unsupported,
under the same heading, a sentence opening with "This", "These" or "Such" (after "However" and the
like), or asking for support of "this claim", is unsupported too, its reason naming the sentence it
rests on. In the 28 stored documents of the 14-paper batch, 3 sentences opened so unmarked, each
after a false claim the audit had marked; one more, re-reviewed later, asked for support of it.
"""

from __future__ import annotations

import bisect
import dataclasses
import re

from reader.audit.decided import GUARD, RESTATED, TOOL
from reader.audit.loop import UNSUPPORTED, AuditResult, SentenceResult
from reader.deepread.writer import heading_lines

RESTS_ON = "draws a consequence from the sentence before it, which the audit found unsupported"
# "This limits …", "However, these …"; or one that asks for support of the claim before it: "The
# authors do not provide evidence to support this claim" (the tutorial's note, after a made-up one)
_FOLLOW_ON = re.compile(
    r"^\W*(?:(?:However|But|Yet|Thus|Therefore|Hence|Moreover|Still),?\s+(?i:this|these|such)|This|These|Such)\b"
    r"|\b(?:support|back|justify|substantiate)\s+(?:this|these|such)\s+(?:claims?|assumptions?|statements?)\b"
)


def follow_ons(text: str, spans: list[tuple[int, int]], result: AuditResult) -> AuditResult:
    """`result` (an audit of the sentences of `text` at `spans`, reader.text.split.sentence_spans,
    in order) with each follow-on of an unsupported sentence under the same heading unsupported
    too; unchanged when the sentences do not line up with the text's headings (one of them on a
    heading line)."""
    if len(spans) != len(result.sentences):
        return result
    lines = heading_lines(text)
    starts = [start for start, _ in lines]
    blocks = []  # the number of headings before each sentence: its heading's place
    for start, _ in spans:
        block = bisect.bisect_right(starts, start)
        if block and start < lines[block - 1][1]:
            return result
        blocks.append(block)
    out: list[SentenceResult] = []
    for i, sentence in enumerate(result.sentences):
        before = out[-1] if i and blocks[i - 1] == blocks[i] else None
        if before is not None and before.flagged and _rests_on(sentence):
            sentence = dataclasses.replace(
                sentence,
                verdict=UNSUPPORTED,
                reasons=[*sentence.reasons, f"{RESTS_ON}: “{before.text[:120]}”"],
                decided_by=GUARD,
                follow_on=True,
            )
        out.append(sentence)
    return dataclasses.replace(result, sentences=out)


def _rests_on(sentence: SentenceResult) -> bool:
    return (
        not sentence.flagged
        and sentence.decided_by not in (TOOL, RESTATED)
        and bool(_FOLLOW_ON.search(sentence.text))
    )
