"""Each audited sentence keeps its own evidence, the passage nearest to it first: the web page
opens that passage when the sentence is clicked, and lists the nearest ones for a flagged one."""

from __future__ import annotations

import re

from reader.audit.evidence import best_first
from reader.audit.loop import audit_sentences
from reader.audit.verify import EvidenceRef
from reader.index.hits import SearchHit
from reader.llm.scripted import ScriptedLLM

CLAIM = re.compile(r"^\[(\d+)\] (.*)$", re.M)

SETUP = "The corpus holds twelve thousand annotated tweets from three regions. Filler about data."
RESULT = "The tagger reaches 91.4 F1 on the held-out tweets. Filler about results."
NOISE = "Related work on tagging newswire is surveyed here. Filler about history."


def yes_to_all():
    def answer(prompt: str) -> str:
        claims = CLAIM.findall(prompt.rpartition("Claims:")[2])
        return "\n".join(f"[{n}] YES" for n, _ in claims)

    return ScriptedLLM(answer)


def hit(chunk_id: int, text: str, page: int, score: float) -> SearchHit:
    return SearchHit(chunk_id, "p1", text, "Body", page, page, score)


def test_the_passage_holding_the_sentence_comes_first_whatever_the_search_ranked_first():
    # a search (say a dense one) that puts a neighbouring passage above the one holding the claim
    def search(query, paper_id):
        if "tagger" in query:
            return [hit(3, NOISE, 2, 0.9), hit(1, SETUP, 1, 0.8), hit(2, RESULT, 4, 0.7)]
        return [hit(3, NOISE, 2, 0.9), hit(2, RESULT, 4, 0.8), hit(1, SETUP, 1, 0.7)]

    claims = [
        "The tagger reaches 91.4 F1 on the held-out tweets.",
        "The corpus holds twelve thousand annotated tweets from three regions.",
    ]
    result = audit_sentences(claims, paper_id="p1", verifier=yes_to_all(), search=search)
    first = {s.text: s.evidence[0] for s in result.sentences}
    assert first[claims[0]].chunk_id == 2 and first[claims[0]].page_start == 4
    assert first[claims[1]].chunk_id == 1 and first[claims[1]].page_start == 1
    # every passage the search found is still kept, only in the sentence's order
    assert all(sorted(e.chunk_id for e in s.evidence) == [1, 2, 3] for s in result.sentences)


def test_a_sentence_without_passages_of_its_own_gets_the_batch_s_nearest_first():
    # the second claim's own search finds nothing: it is judged against the batch's passages,
    # and of those it keeps the one nearest to it first, not the batch's first
    def search(query, paper_id):
        if "tagger" in query:
            return [hit(1, SETUP, 1, 0.9), hit(2, RESULT, 4, 0.8)]
        return []

    claims = [
        "The tagger reaches 91.4 F1 on the held-out tweets from three regions.",
        "Held-out F1 of the tagger is 91.4.",
    ]
    result = audit_sentences(claims, paper_id="p1", verifier=yes_to_all(), search=search)
    lone = result.sentences[1]
    assert [e.chunk_id for e in lone.evidence][0] == 2, [e.chunk_id for e in lone.evidence]


def test_best_first_ranks_by_rare_words_shared_and_keeps_the_search_order_on_ties():
    refs = [EvidenceRef(1, 1, 1, NOISE), EvidenceRef(2, 4, 4, RESULT), EvidenceRef(3, 2, 2, SETUP)]
    assert [e.chunk_id for e in best_first("The tagger reaches 91.4 F1.", refs)][0] == 2
    assert [e.chunk_id for e in best_first("Nothing in common at all.", refs)] == [1, 2, 3]
    assert best_first("Any claim.", []) == []


def test_evidence_cut_to_a_short_budget_keeps_the_claims_own_sentence():
    from reader.audit.evidence import claim_evidence

    text = (
        "The corpus was collected in 2019 from public forums in three countries. "
        "Annotators labelled each post twice. The tagger reaches 91.4 F1 on the held-out tweets. "
        "Training took three days on one GPU."
    )
    found = [EvidenceRef(1, 2, 2, text)]
    shown = claim_evidence(found, "The tagger scores 91.4 F1 on held-out tweets.", max_chars=80)
    assert shown[0].text == "The tagger reaches 91.4 F1 on the held-out tweets."
    assert claim_evidence(found, max_chars=80)[0].text == text[:80]  # no claim: cut from the start
    assert claim_evidence(found, "The tagger scores 91.4 F1.")[0].text == text  # within the budget: whole
