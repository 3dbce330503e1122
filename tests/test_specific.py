"""A sentence that names nothing of the paper is told apart from one that does, and the deep
read's synthesis flags it."""

from __future__ import annotations

from reader.audit.guards import PaperFacts
from reader.audit.loop import UNSUPPORTED, audit_text
from reader.audit.specific import NOTHING_SPECIFIC, says_nothing_specific, specific_terms
from reader.llm.scripted import ScriptedLLM

PAPER = PaperFacts.from_texts(
    [
        "We tag named entities in tweets with a BiLSTM-CRF and gazetteers. Table 2 lists the "
        "results: 91.2 F1 on the WNUT-17 corpus. Orthographic features help on hashtags."
    ]
)


def test_generic_sentences_say_nothing_and_specific_ones_name_something():
    for generic in (
        "The paper provides a detailed evaluation of the method.",
        "The paper does not make any overclaims.",
        "The results show that the proposed approach is effective.",
    ):
        assert says_nothing_specific(generic, PAPER), generic
    assert specific_terms("The tagger reaches 91.2 F1.", PAPER) == ["91.2", "F1"]
    assert specific_terms("Table 2 lists the results.", PAPER) == ["2", "Table 2"]
    assert specific_terms("It uses a BiLSTM-CRF.", PAPER) == ["BiLSTM-CRF"]
    assert specific_terms("Orthographic features help on hashtags.", PAPER) == ["Orthographic", "hashtags"]
    assert not says_nothing_specific("该方法提升了准确率。", PAPER)  # not judged


def test_a_name_the_paper_does_not_use_does_not_make_a_sentence_specific():
    assert says_nothing_specific("The method is compared against SciBERT.", PAPER)


def test_the_audit_flags_it_only_when_asked():
    verifier = ScriptedLLM(lambda prompt: "\n".join(f"[{i}] YES" for i in range(1, 5)))
    text = "The paper provides a detailed evaluation of the method. The tagger reaches 91.2 F1."
    asked = audit_text(text, verifier=verifier, facts=PAPER, fallback_text="paper", require_specific=True)
    generic, specific = asked.sentences
    assert generic.verdict == UNSUPPORTED and NOTHING_SPECIFIC in generic.reasons
    assert specific.verdict != UNSUPPORTED
    plain = audit_text(text, verifier=verifier, facts=PAPER, fallback_text="paper")
    assert all(s.verdict != UNSUPPORTED for s in plain.sentences)
