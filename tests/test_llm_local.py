"""Smoke test of the embedded model: a 4-claim verification prompt answered in the `[n] YES/NO` format."""

import re

import pytest

from reader.llm.base import user

EVIDENCE = (
    "We evaluate on the WMT 2014 English-German dataset, consisting of about 4.5 million "
    "sentence pairs. Our big model achieves 28.4 BLEU, outperforming the best previously "
    "reported models by more than 2.0 BLEU. Training took 3.5 days on 8 P100 GPUs."
)
CLAIMS = [
    ("The big model reaches 41.2 BLEU.", "NO"),
    ("The dataset has about 4.5 million sentence pairs.", "YES"),
    ("Training took 12 days on 64 TPUs.", "NO"),
    ("Training took 3.5 days on 8 P100 GPUs.", "YES"),
]


def verification_prompt(evidence: str, claims: list[str]) -> str:
    numbered = "\n".join(f"[{i}] {claim}" for i, claim in enumerate(claims, 1))
    return (
        f"Evidence:\n{evidence}\n\nClaims:\n{numbered}\n\n"
        "Answer one line per claim: [n] YES if the evidence supports the claim, [n] NO if not. "
        "No explanations."
    )


@pytest.mark.model
def test_embedded_model_verifies_claims(embedded_llm):
    prompt = verification_prompt(EVIDENCE, [claim for claim, _ in CLAIMS])
    out = embedded_llm.complete(user(prompt), max_tokens=40)
    answers = {}
    for line in out.text.splitlines():
        match = re.search(r"\[(\d)\]\s*\**\s*(YES|NO)\b", line, re.IGNORECASE)
        if match:
            answers[int(match.group(1))] = match.group(2).upper()
    assert sorted(answers) == [1, 2, 3, 4], f"not in the [n] YES/NO format: {out.text!r}"
    right = sum(answers[i] == gold for i, (_, gold) in enumerate(CLAIMS, 1))
    assert right >= 3, f"only {right} of 4 right: {out.text!r}"
    assert out.prompt_tokens > 50 and 0 < out.completion_tokens <= 40
    assert out.latency_s > 0 and out.model.endswith("(embedded)")
    # Temperature 0 is deterministic, which the response cache relies on.
    assert embedded_llm.complete(user(prompt), max_tokens=40).text == out.text
