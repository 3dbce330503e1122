"""A sentence that only draws a consequence from the one before it ("This limits the ability to
evaluate the effectiveness of REALM …" after "the paper does not include any comparison between
REALM and its baselines") stands or falls with it: after a sentence the audit found unsupported,
under the same heading, a sentence opening with "This", "These" or "Such" is unsupported too,
its reason naming the sentence it rests on. In the 28 stored documents of the 14-paper batch, 3
sentences did so unmarked, each after a false claim the audit had marked.
"""

from __future__ import annotations

import dataclasses
import re

from reader.audit.decided import GUARD, RESTATED, TOOL
from reader.audit.loop import UNSUPPORTED, AuditResult, SentenceResult
from reader.deepread.writer import split_document
from reader.text.split import split_sentences

RESTS_ON = "draws a consequence from the sentence before it, which the audit found unsupported"
_FOLLOW_ON = re.compile(r"^\W*(?:This|These|Such)\b")


def follow_ons(text: str, result: AuditResult) -> AuditResult:
    """`result` (an audit of split_sentences(text), in order) with each follow-on of an
    unsupported sentence under the same heading unsupported too; unchanged when the sentences do
    not line up with the text's headings."""
    blocks = [len(split_sentences(body)) for _, body in split_document(text)]
    if sum(blocks) != len(result.sentences):
        return result
    out: list[SentenceResult] = []
    for size in blocks:
        block = result.sentences[len(out) : len(out) + size]
        for i, sentence in enumerate(block):
            before = out[-1] if i else None
            if before is not None and before.flagged and _rests_on(sentence):
                sentence = dataclasses.replace(
                    sentence,
                    verdict=UNSUPPORTED,
                    reasons=[*sentence.reasons, f"{RESTS_ON}: “{before.text[:120]}”"],
                    decided_by=GUARD,
                )
            out.append(sentence)
    return dataclasses.replace(result, sentences=out)


def _rests_on(sentence: SentenceResult) -> bool:
    return (
        not sentence.flagged
        and sentence.decided_by not in (TOOL, RESTATED)
        and bool(_FOLLOW_ON.match(sentence.text))
    )


def decided_by_follow_on(sentence: SentenceResult) -> bool:
    """The verdict came from this rule (an earlier pass's: to be decided again, not reused)."""
    return any(reason.startswith(RESTS_ON) for reason in sentence.reasons)
