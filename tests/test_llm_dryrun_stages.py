"""The dry-run LLM chooses the kind of answer by the call's stage, not by the prompt's wording."""

from __future__ import annotations

import re

from conftest import make_reader
from test_headingless import PARAGRAPHS

from reader.llm.dryrun import FALLBACK, HANDLERS, DryRunLLM, dry_run_answer
from reader.llm.scripted import ScriptedLLM
from reader.prompts import render

PAPER = " ".join(PARAGRAPHS)
CLAIMS = [
    "SPARTA reaches a recall of 81.2% at ten passages, against 64.5% for BM25.",
    "The model beats GPT-4 on every legal benchmark by a wide margin.",
]
FABRICATED = [
    "The authors trained the system on forty million lunar photographs.",
    "A panel of cardiologists rated every retrieved passage by hand.",
    "The retriever runs on a wristwatch without any loss in quality.",
    "Reviewers praised the treatment of Byzantine tax records.",
    "Its energy use was offset by planting oak trees in Patagonia.",
    "The code is written in COBOL and ships as a floppy disk.",
]
YES_NO_LINES = re.compile(r"^(\[\d+\] (YES|NO)\n?)+$")


def test_a_verify_prompt_under_a_writing_stage_gets_prose():
    prompt = render("verify", claims=CLAIMS, evidence=[[{"text": PAPER, "pages": "1"}]] * 2)
    assert dry_run_answer(prompt, "verify") == "[1] YES\n[2] NO"
    prose = dry_run_answer(prompt, "synthesis")
    assert prose.strip() and not re.search(r"^\[\d+\] (YES|NO)", prose, re.M)
    assert all(s.strip() in PAPER for s in re.split(r"(?<=\.)\s+", prose) if s.strip())


def test_a_prose_prompt_under_a_checking_stage_gets_numbered_yes_no_lines():
    # no verify template and none of its wording: only the claims and the evidence are read
    prompt = f"Here is what the paper says.\n\n{PAPER}\n\nClaims:\n" + "\n".join(
        f"[{n}] {claim}" for n, claim in enumerate(CLAIMS, 1)
    )
    for stage in ("verify", "audit", "crag-check"):
        answer = dry_run_answer(prompt, stage)
        assert YES_NO_LINES.match(answer) and answer == "[1] YES\n[2] NO", (stage, answer)
    prose = dry_run_answer(prompt, "critique")
    assert not YES_NO_LINES.match(prose) and any(p.split(". ")[0] in prose for p in PARAGRAPHS)


def test_the_same_prompt_gets_the_shape_of_each_stage():
    prompt = render("grade", question="What recall does SPARTA reach on LongDocs?", passage=PAPER)
    assert re.match(r"YES\n\d+% of the question's terms", dry_run_answer(prompt, "crag-grade"))
    assert len(dry_run_answer(prompt, "crag-rewrite").splitlines()) == 3  # no "Write n": three
    assert "% of the question's terms" not in dry_run_answer(prompt, "synthesis")


def test_an_unknown_stage_gets_the_fallback_prose():
    prompt = render("verify", claims=CLAIMS, evidence=[[{"text": PAPER, "pages": "1"}]] * 2)
    assert dry_run_answer(prompt, "no-such-stage") == FALLBACK(prompt) == dry_run_answer(prompt, "")
    assert not YES_NO_LINES.match(FALLBACK(prompt))


def test_every_stage_the_pipeline_uses_has_a_handler(reader_env, tmp_path, monkeypatch):
    """Read, audit and ask through the façade; every stage they call with has its handler, and
    every handler is for a stage they call with."""
    from test_checker_audit import WordScorer

    def write(prompt, stage):
        answer = dry_run_answer(prompt, stage)
        # first drafts with mostly unsupported sentences, so that both get rewritten
        return answer + "\n\n" + " ".join(FABRICATED) if stage in ("critique", "synthesis") else answer

    writer = ScriptedLLM(write, model="dry-run-writer", with_stage=True)
    checker = DryRunLLM()
    reader = make_reader(llm=writer, verifier=checker)
    paper = tmp_path / "sparta.txt"
    paper.write_text(
        "Sparse retrieval for long scientific documents\n\n" + "\n\n".join(PARAGRAPHS) + "\n",
        encoding="utf-8",
    )

    result = reader.read(paper)
    assert all(k.loop.regenerations >= 1 for k in result.analyses)
    reader.audit(f"{CLAIMS[0]} {CLAIMS[1]}", result.paper_id)
    # with the claim checker on, numbers and comparisons are also checked by extraction
    monkeypatch.setenv("READER_CHECKER", "on")
    monkeypatch.setenv("READER_EXTRACTION", "on")
    make_reader(llm=writer, verifier=checker, checker=WordScorer()).audit(
        f"{CLAIMS[0]} {CLAIMS[1]}", result.paper_id
    )
    answered = reader.ask("What recall does SPARTA reach on LongDocs?", result.paper_id)
    assert not answered.not_found
    reader.ask("Which wheat cultivars grew best in the drought years?", result.paper_id)
    # and the confidence routing, which re-grades its best passages one call each (crag-grade)
    from reader.crag.grounded import audit_grounded
    from reader.crag.pipeline import CragConfig, ask

    confirmed = ask(
        "What recall does SPARTA reach on LongDocs?",
        paper_id=result.paper_id,
        generator=reader.services.generator,
        verifier=reader.services.verifier,
        search=reader.services.search_index.search,
        check_grounded=audit_grounded,
        config=CragConfig(routing="confidence"),
    )
    assert confirmed.answer == answered.answer
    # a question about citations is sorted by the LLM (crag-intent); a passed review's open points
    # become follow-up questions (followup)
    assert reader.ask("Which papers cite SPARTA?").intent["by"] == "llm"
    open_points = "## Open questions\nThe recall on papers in Chinese is not reported anywhere."
    assert reader.services.follow_up(result.paper_id, [open_points], [0.0], n=1).by.startswith("llm")

    used = {call["stage"] for llm in (writer, checker.scripted) for call in llm.history}
    assert used <= set(HANDLERS), f"stages without a dry-run handler: {sorted(used - set(HANDLERS))}"
    assert set(HANDLERS) <= used, f"handlers for stages this run did not use: {sorted(set(HANDLERS) - used)}"
