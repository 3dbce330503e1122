"""The audit pass and the regenerate-and-mark loop, with the scripted LLM."""

import re

import pytest
from concurrency_probe import ConcurrencyProbe

from reader.audit.guards import PaperFacts
from reader.audit.loop import MARK, audit_loop, audit_text, mark_unsupported
from reader.index.hits import SearchHit
from reader.llm.base import ENDPOINT
from reader.llm.dryrun import answer_verify, claims_with_evidence
from reader.llm.scripted import ScriptedLLM

CLAIM = re.compile(r"^\[(\d+)\] (.*)$", re.M)


def claims_of(prompt: str) -> list[str]:
    head = prompt.rpartition("Claims:")[2]
    return [m.group(2) for m in CLAIM.finditer(head)]


def rule_verifier(is_supported, **kw) -> ScriptedLLM:
    """A verifier answering YES/NO per claim by a rule over the claim's text."""

    def respond(prompt):
        return "\n".join(
            f"[{i}] {'YES' if is_supported(c) else 'NO'}" for i, c in enumerate(claims_of(prompt), 1)
        )

    return ScriptedLLM(respond, **kw)


def hit(chunk_id, text, score=1.0, page=2):
    return SearchHit(chunk_id, "p1", text, "Results", page, page, score)


def paper_search(query, paper_id):
    return [
        hit(1, "passage one", 0.2),
        hit(2, "passage two", 0.9),
        hit(3, "passage three", 0.5),
        hit(4, "passage four", 0.1),
    ]


GOOD = [f"Good sentence number {w} holds." for w in "ABCDEFGHIJ"]


def test_one_pass_batches_evidence_and_verdicts():
    verifier = rule_verifier(lambda c: "bad" not in c)
    text = " ".join(GOOD[:5]) + " A bad sentence here."
    result = audit_text(text, paper_id="p1", verifier=verifier, search=paper_search)
    assert verifier.calls == 2  # 6 sentences -> batches of 4 and 2
    assert result.llm_calls == 2
    assert [s.verdict for s in result.sentences] == ["supported"] * 5 + ["unsupported"]
    assert result.n_flagged == 1 and result.flagged_ratio == pytest.approx(1 / 6)
    # top 3 hits by fused score, best first, with pages
    assert [e.chunk_id for e in result.sentences[0].evidence] == [2, 3, 1]
    # each claim's own top 3 passages: no word in common, so the opening of the best one
    assert verifier.history[0]["stage"] == "verify" and verifier.history[0]["paper_id"] == "p1"
    assert "passage two" in verifier.history[0]["prompt"]
    assert "passage four" not in verifier.history[0]["prompt"]


def test_each_claim_has_its_own_evidence_and_a_late_one_keeps_its_quote():
    """A batch of 4 whose first three claims have long evidence: the fourth claim's quote is still
    right under it (a shared union of 2,400 characters was filled by the first claims' sentences)."""

    def long_passage(word):
        return " ".join(
            f"Layer {word}{i} of the encoder applies self-attention over every position of the input, "
            f"then a feed-forward network whose inner width is four times the model width ({word}{i})."
            for i in range(8)
        )

    quote = "Our big model reaches 28.4 BLEU on the WMT 2014 English-to-German task."
    claims = [f"Layer {w}3 of the encoder applies self-attention over every position." for w in "ABC"]
    claims.append("The big model reaches 28.4 BLEU on the WMT 2014 English-to-German task.")

    def search(query, paper_id):
        if "BLEU" in query:
            return [hit(9, long_passage("Z") + " " + quote, page=8)]
        word = query.split()[1][0]
        return [hit(ord(word), long_passage(word), page=3)]

    verifier = ScriptedLLM(answer_verify)
    result = audit_text(" ".join(claims), paper_id="p1", verifier=verifier, search=search)
    assert verifier.calls == 1
    shown = claims_with_evidence(verifier.history[0]["prompt"])
    asked = {claim: evidence for _, claim, evidence in shown}
    assert quote in asked[claims[3]]
    for claim in claims[:3]:  # each claim's own layer, not another's
        letter = claim.split()[1][0]
        assert f"Layer {letter}3 " in asked[claim] and "BLEU" not in asked[claim]
        assert len(asked[claim]) <= ENDPOINT.claim_evidence_chars  # a ScriptedLLM says it is an endpoint
    assert [s.verdict for s in result.sentences] == ["supported"] * 4
    assert len(shown) == 5  # and the control claim, which no result holds
    assert {s.text for s in result.sentences} == set(claims)


def test_fallback_to_paper_start_and_no_evidence_at_all():
    verifier = rule_verifier(lambda c: True)
    paper_text = "x" * 5000
    result = audit_text("It holds.", verifier=verifier, search=lambda q, p: [], fallback_text=paper_text)
    ev = result.sentences[0].evidence
    assert len(ev) == 1 and ev[0].chunk_id is None and len(ev[0].text) == 3000
    assert result.sentences[0].verdict == "supported"

    verifier = rule_verifier(lambda c: True)  # nothing to check against: unsupported, and no call
    result = audit_text("It holds.", verifier=verifier, search=lambda q, p: [], fallback_text="")
    assert verifier.calls == 0 and result.llm_calls == 0
    assert result.sentences[0].verdict == "unsupported"
    assert "no evidence found in the paper" in result.sentences[0].reasons


def test_search_failure_falls_back_to_the_papers_opening_text():
    def broken_search(query, paper_id):
        raise OSError("index file truncated")

    verifier = rule_verifier(lambda c: True)
    result = audit_text(
        "It holds. It also holds.",
        verifier=verifier,
        search=broken_search,
        fallback_text="The paper's opening text says it holds.",
    )
    assert verifier.calls == 1
    assert [s.verdict for s in result.sentences] == ["supported", "supported"]
    assert result.sentences[0].evidence[0].chunk_id is None
    assert any("search failed (OSError: index file truncated)" in r for r in result.sentences[0].reasons)


def test_no_sentences():
    verifier = ScriptedLLM()
    result = audit_text("  \n## Heading only\n", verifier=verifier, search=paper_search)
    assert result.sentences == [] and result.flagged_ratio == 0.0 and verifier.calls == 0


def test_a_claim_left_out_is_asked_about_once_more_then_unchecked():
    verifier = ScriptedLLM().enqueue("[1] NO\n[3] YES", "I cannot say.")
    text = "First claim. Second claim. Third claim."
    result = audit_text(text, verifier=verifier, search=paper_search)
    follow_up = verifier.history[1]["prompt"].rpartition("<claims>")[2]
    assert verifier.calls == 2 and "[1] Second claim." in follow_up and "Third" not in follow_up
    assert [s.verdict for s in result.sentences] == ["unsupported", "unchecked", "supported"]
    assert (result.n_flagged, result.n_unchecked, result.n_unanswered) == (1, 1, 0)
    assert result.sentences[1].llm_answer == ""


def test_garbage_reply_is_asked_again_then_leaves_all_unchecked():
    verifier = ScriptedLLM().enqueue("I am not sure what you mean.", "Sorry, what claims?")
    result = audit_text("First claim. Second claim.", verifier=verifier, search=paper_search)
    assert verifier.calls == 2 and result.llm_calls == 2
    assert [s.verdict for s in result.sentences] == ["unchecked", "unchecked"]
    assert result.flagged_ratio == 0.0 and result.n_unchecked == 2 and result.n_unanswered == 0


def test_guards_override_a_yes_nexus_example():
    facts = PaperFacts.from_texts(
        [
            "BERT-large loses accuracy on MNLI after pruning heads.",
            "Table 1: accuracy of BERT-large and DistilBERT.",
        ]
    )
    verifier = rule_verifier(lambda c: True)  # a verifier that believes everything
    text = "BERT-large 精度只下降 0.3%，远低于 NEXUS 的 1.2%。BERT-large loses accuracy after pruning."
    result = audit_text(text, verifier=verifier, search=paper_search, facts=facts)
    fabricated, faithful = result.sentences
    # the guards decide it: the verifier, which would have said YES, is not asked about it
    assert fabricated.verdict == "unsupported" and fabricated.decided_by == "guard"
    assert "NEXUS" not in " ".join(h["prompt"] for h in verifier.history)
    assert "name 'NEXUS' not found in the paper" in fabricated.reasons
    assert "number 0.3% not found in the paper" in fabricated.reasons
    assert "number 1.2% not found in the paper" in fabricated.reasons
    assert faithful.verdict == "supported"


def test_duplicate_sentence_verified_once_marked_once():
    verifier = rule_verifier(lambda c: "invented" not in c)
    text = "An invented claim. A true claim. An invented claim."
    result = audit_text(text, verifier=verifier, search=paper_search)
    assert claims_of(verifier.history[0]["prompt"]) == ["An invented claim.", "A true claim."]
    assert result.n_flagged == 2 and result.flagged == ["An invented claim."]
    marked = mark_unsupported(text, result.flagged)
    assert marked == f"{MARK}An invented claim. A true claim. An invented claim."


def test_marking_never_deletes_and_handles_cjk():
    text = "第一句是真的。第二句是编的！Third is fine."
    marked = mark_unsupported(text, ["第二句是编的！"])
    assert marked == f"第一句是真的。{MARK}第二句是编的！Third is fine."
    assert marked.replace(MARK, "") == text


def texts_generator(*texts):
    calls = []

    def generate(flagged, previous):
        calls.append((list(flagged), previous))
        return texts[len(calls) - 1]

    return generate, calls


def test_loop_passes_first_try():
    verifier = rule_verifier(lambda c: "fake" not in c.lower())
    text = " ".join(GOOD[:4]) + " One fake claim."  # 1/5 = 0.2 <= 0.3
    generate, calls = texts_generator(text)
    loop = audit_loop(
        generate, lambda t, known: audit_text(t, verifier=verifier, search=paper_search, known=known)
    )
    assert len(calls) == 1 and loop.regenerations == 0
    assert loop.final_text == " ".join(GOOD[:4]) + f" {MARK}One fake claim."


def test_loop_one_regeneration_then_pass_feeds_flagged_back():
    verifier = rule_verifier(lambda c: "fake" not in c.lower())
    first = "A fake claim. Another fake claim. " + GOOD[0]  # 2/3 flagged
    second = GOOD[0] + " " + GOOD[1] + " " + GOOD[2]
    generate, calls = texts_generator(first, second)
    loop = audit_loop(
        generate, lambda t, known: audit_text(t, verifier=verifier, search=paper_search, known=known)
    )
    assert loop.regenerations == 1
    assert calls[1] == (["A fake claim.", "Another fake claim."], first)
    assert [round(it.audit.flagged_ratio, 2) for it in loop.iterations] == [0.67, 0.0]
    assert loop.final_text == second and MARK not in loop.final_text


def test_loop_hits_the_cap_and_marks():
    verifier = rule_verifier(lambda c: "fake" not in c.lower())
    drafts = [f"Fake claim {i}. Fake again {i}. {GOOD[i]}" for i in range(5)]
    generate, calls = texts_generator(*drafts)
    loop = audit_loop(
        generate, lambda t, known: audit_text(t, verifier=verifier, search=paper_search, known=known)
    )
    assert len(calls) == 3 and loop.regenerations == 2  # at most 2 regenerations
    assert loop.final_text == f"{MARK}Fake claim 2. {MARK}Fake again 2. {GOOD[2]}"
    assert loop.final.flagged_ratio == pytest.approx(2 / 3)


def test_a_rewrite_with_only_its_headings_does_not_replace_the_draft():
    verifier = rule_verifier(lambda c: "fake" not in c.lower())
    draft = f"## Strengths\nA fake claim. {GOOD[0]} {GOOD[1]}\n## Weaknesses\nAnother fake claim."
    generate, calls = texts_generator(draft, "## Strengths\n## Weaknesses\n")
    loop = audit_loop(
        generate, lambda t, known: audit_text(t, verifier=verifier, search=paper_search, known=known)
    )
    assert len(calls) == 2 and [it.text for it in loop.iterations] == [draft]
    assert loop.rewrite_notes == ["rewrite 1 was not kept: it has no sentences"]
    assert loop.regenerations == 1 and len(loop.rejected) == 1
    assert loop.final_text.count(MARK) == 2 and GOOD[0] in loop.final_text  # the draft, marked


def test_a_rewrite_that_drops_supported_sentences_is_not_kept():
    verifier = rule_verifier(lambda c: "fake" not in c.lower())
    draft = f"A fake claim. Another fake claim. {GOOD[0]} {GOOD[1]}"  # 2 of 4 flagged
    generate, _ = texts_generator(draft, GOOD[0])
    loop = audit_loop(
        generate, lambda t, known: audit_text(t, verifier=verifier, search=paper_search, known=known)
    )
    assert loop.final_text == f"{MARK}A fake claim. {MARK}Another fake claim. {GOOD[0]} {GOOD[1]}"
    assert loop.rewrite_notes == [
        "rewrite 1 was not kept: it has 1 supported sentences where the text before it had 2"
    ]


def test_a_failed_rewrite_keeps_the_draft_and_a_failed_draft_still_fails():
    from reader.errors import LLMError

    verifier = rule_verifier(lambda c: "fake" not in c.lower())
    draft = f"A fake claim. Another fake claim. {GOOD[0]}"

    def generate(flagged, previous):
        if previous is None:
            return draft
        raise LLMError("the generator returned an empty answer (3 attempts)")

    loop = audit_loop(
        generate, lambda t, known: audit_text(t, verifier=verifier, search=paper_search, known=known)
    )
    assert loop.final_text.startswith(MARK) and loop.regenerations == 1
    assert loop.rewrite_notes == [
        "rewrite 1 failed (the generator returned an empty answer (3 attempts)): the text before it was kept"
    ]

    def broken(flagged, previous):
        raise LLMError("no reply")

    with pytest.raises(LLMError):
        audit_loop(broken, lambda t, known: audit_text(t, verifier=verifier, search=paper_search))


def test_incremental_reverification_skips_unchanged_sentences():
    verifier = rule_verifier(lambda c: "fake" not in c.lower())
    first = " ".join(GOOD[:4]) + " A fake one. Another fake one. Third fake one."
    second = " ".join(GOOD[:4]) + " " + GOOD[4]  # four unchanged, one new
    generate, _ = texts_generator(first, second)
    seen = []

    def audit(text, known):
        before = verifier.calls
        result = audit_text(text, verifier=verifier, search=paper_search, known=known)
        seen.append(
            (verifier.calls - before, [c for h in verifier.history[before:] for c in claims_of(h["prompt"])])
        )
        return result

    loop = audit_loop(generate, audit)
    assert loop.regenerations == 1
    assert seen[1] == (1, [GOOD[4]])  # one call, only for the new sentence
    second_pass = loop.iterations[1].audit
    assert [s.reused for s in second_pass.sentences] == [True] * 4 + [False]
    assert second_pass.llm_calls == 1


def test_batches_run_concurrently_bounded():
    probe = ConcurrencyProbe()
    verifier = ScriptedLLM(probe.wrap(lambda prompt: "\n".join(f"[{i}] YES" for i in range(1, 5))))
    text = " ".join(f"Sentence {i} is here." for i in range(40))
    audit_text(text, verifier=verifier, search=paper_search, max_workers=4)
    assert verifier.calls == 10
    assert probe.peak == 4


def test_evidence_for_override_audits_against_given_passages():
    from reader.audit.verify import EvidenceRef

    verifier = rule_verifier(lambda c: True)
    given = [EvidenceRef(9, 5, 5, "The given passage.")]
    result = audit_text("A claim.", verifier=verifier, evidence_for=lambda batch: given)
    assert result.sentences[0].evidence == given
    assert "The given passage." in verifier.history[0]["prompt"]


def test_verifier_failure_propagates():
    from reader.errors import LLMError

    verifier = ScriptedLLM().enqueue(LLMError("endpoint down"))
    with pytest.raises(LLMError):
        audit_text("A claim.", verifier=verifier, search=paper_search)


def test_focused_evidence_shows_each_claims_deciding_sentences():
    filler = " ".join(f"Unrelated remark number {i} about formatting." for i in range(12))
    passages = {
        "SPECTER": hit(
            7,
            f"{filler} SPECTER reaches 80.0 on average over all tasks. Next it is ablated. {filler}",
            page=6,
        ),
        "corpus": hit(8, f"{filler} The corpus holds 146K papers from Semantic Scholar. {filler}", page=4),
    }

    def search(query, paper_id):
        return [h for key, h in passages.items() if key.lower() in query.lower()]

    verifier = rule_verifier(lambda c: True)
    result = audit_text(
        "SPECTER reaches 80.0 on average. The corpus has 146K papers.",
        paper_id="p1",
        verifier=verifier,
        search=search,
    )
    prompt = verifier.history[0]["prompt"]
    assert verifier.calls == 1
    assert "SPECTER reaches 80.0 on average over all tasks." in prompt
    assert "The corpus holds 146K papers from Semantic Scholar." in prompt
    assert "Next it is ablated." in prompt  # a neighbour comes along
    assert prompt.count("Unrelated remark") <= 4  # not the whole 300-token passages
    # each sentence keeps its own passage, not its batch's
    assert [[e.chunk_id for e in s.evidence] for s in result.sentences] == [[7], [8]]


def test_the_embedded_verifier_reads_a_shorter_excerpt_that_keeps_the_claims_sentence():
    from reader.llm.base import SMALL_LOCAL

    filler = " ".join(
        f"Sentence {i} describes an unrelated detail of how the corpus was collected, cleaned, "
        f"deduplicated and split by the annotators over several months of work."
        for i in range(6)
    )
    passage = f"{filler} The tagger reaches 91.4 F1 on the held-out tweets. {filler}"
    claim = "The tagger reaches 91.4 F1 on the held-out tweets."
    shown = {}
    for capabilities in (ENDPOINT, SMALL_LOCAL):
        verifier = ScriptedLLM(answer_verify, capabilities=capabilities)
        audit_text(claim, paper_id="p1", verifier=verifier, search=lambda q, p: [hit(1, passage)])
        asked = {c: evidence for _, c, evidence in claims_with_evidence(verifier.history[0]["prompt"])}
        shown[capabilities.claim_evidence_chars] = asked[claim]
    assert SMALL_LOCAL.claim_evidence_chars < ENDPOINT.claim_evidence_chars
    for chars, evidence in shown.items():
        assert claim in evidence and len(evidence) <= chars
    # the endpoint is shown the sentence with its neighbours, the embedded model the sentence
    assert len(shown[SMALL_LOCAL.claim_evidence_chars]) < len(shown[ENDPOINT.claim_evidence_chars])
