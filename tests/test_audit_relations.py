"""The contrast check: a comparison is asked about in reverse, and YES to both is no decision."""

import pytest

from reader.audit.loop import audit_text
from reader.audit.relations import reversal
from reader.llm.scripted import ScriptedLLM


@pytest.mark.parametrize("sentence, turned", [
    ("SPECTER outperforms SciBERT on every task.", "SPECTER underperforms SciBERT on every task."),
    ("Recall is higher on news than on fiction.", "Recall is lower on news than on fiction."),
    ("Fewer errors occur with the adapted model.", "More errors occur with the adapted model."),
    ("The model is evaluated zero-shot on co-view.", "The model is evaluated fine-tuned on co-view."),
    ("FINE 的方差高于 COARSE。", "FINE 的方差低于 COARSE。"),
    ("热胁迫使产量显著降低。", "热胁迫使产量显著提高。"),
    ("The corpus holds 146K papers.", None),
])
def test_reversal_turns_the_first_direction_word(sentence, turned):
    assert reversal(sentence) == turned


def _claims(prompt: str) -> list[str]:
    import re

    return re.findall(r'<claim n="\d+">(.*?)</claim>', prompt, re.S) or re.findall(r"^\[\d+\] (.*)$", prompt, re.M)


def test_yes_to_a_claim_and_its_reversal_is_not_support():
    seen = []

    def respond(prompt):
        claims = _claims(prompt)
        seen.append(claims)
        return "\n".join(f"[{i}] YES" for i in range(1, len(claims) + 1))  # says YES to everything

    result = audit_text("A beats B on every task. The corpus holds 146K papers.",
                        verifier=ScriptedLLM(respond), fallback_text="A beats B. The corpus holds 146K papers.",
                        contrast=True)
    assert seen[0][-1] == "A trails B on every task."  # the reversal asked in the same call
    first, second = result.sentences
    assert first.verdict == "unsupported"
    assert any("also accepts the reversal" in r for r in first.reasons)
    assert second.verdict == "supported"


def test_a_verifier_that_tells_the_claim_from_its_reversal_supports_it():
    def respond(prompt):
        claims = _claims(prompt)
        return "\n".join(f"[{i}] {'NO' if 'trails' in c else 'YES'}" for i, c in enumerate(claims, 1))

    result = audit_text("A beats B on every task.", verifier=ScriptedLLM(respond),
                        fallback_text="A beats B.", contrast=True)
    assert result.sentences[0].verdict == "supported"
    assert result.sentences[0].judgement.reversal_answer == "NO"


def test_the_contrast_check_is_off_by_default():
    seen = []

    def respond(prompt):
        seen.append(_claims(prompt))
        return "[1] YES"

    result = audit_text("A beats B on every task.", verifier=ScriptedLLM(respond), fallback_text="A beats B.")
    assert seen == [["A beats B on every task."]] and result.sentences[0].verdict == "supported"
