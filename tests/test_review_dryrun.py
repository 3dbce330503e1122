"""The dry-run LLM behind READER_LLM_BASE_URL=scripted: answers every stage's prompt in shape."""

from __future__ import annotations

import re

import pytest
from test_prompts import SAMPLES  # current variable names of every template

from reader.config import load_settings
from reader.errors import ConfigError
from reader.llm.base import user
from reader.llm.dryrun import MODEL_NAME, DryRunLLM, dry_run_answer
from reader.prompts import render

PAPER = (
    "We introduce SPARTA, a sparse retriever for long scientific documents. "
    "On the LongDocs benchmark SPARTA reaches a recall of 81.2% at ten passages. "
    "The model is trained on two million query and passage pairs drawn from PubMed. "
    "Ablations show that the learned term weights account for most of the gain over BM25. "
    "Training takes nine hours on a single graphics card with sixteen gigabytes of memory."
)


def test_verify_answers_yes_for_claims_in_the_evidence_and_no_otherwise():
    prompt = render(
        "verify",
        claims=[
            "SPARTA reaches a recall of 81.2% at ten passages on LongDocs.",
            "The model beats GPT-4 on every legal benchmark by a wide margin.",
        ],
        evidence=[[{"text": PAPER, "pages": "3"}]] * 2,
    )
    assert dry_run_answer(prompt, "verify") == "[1] YES\n[2] NO"
    no_evidence = render("verify", claims=["SPARTA reaches a recall of 81.2%."], evidence=[])
    assert dry_run_answer(no_evidence, "audit") == "[1] NO"


def test_verify_reads_each_claims_own_evidence_and_rejects_a_changed_number_or_direction():
    """The audit's control claim is a sentence of the evidence with a number changed or a comparison
    turned round: most of its words are there, and the honest dry run still says NO."""
    claims = [
        "SPARTA reaches a recall of 81.2% at ten passages.",
        "SPARTA reaches a recall of 56.8% at ten passages.",
        "Training takes nine hours on a single graphics card.",
        "The learned term weights account for less of the gain over BM25.",
    ]
    own = [[{"text": PAPER, "pages": "3"}]] * 2 + [
        [{"text": "SPARTA reaches a recall of 81.2%.", "pages": "3"}]
    ]
    own += [[{"text": PAPER, "pages": "3"}]]
    prompt = render("verify", claims=claims, evidence=own)
    # claim 3's own evidence does not hold it, though the other claims' evidence does
    assert dry_run_answer(prompt, "verify") == "[1] YES\n[2] NO\n[3] NO\n[4] NO"


def test_generation_is_built_from_the_papers_sentences_and_is_deterministic():
    prompt = f"Write a critique of this paper.\n\nPaper:\n{PAPER}\n\nWrite in English."
    text = dry_run_answer(prompt, "critique")
    assert text == dry_run_answer(prompt, "critique")
    pieces = [s for s in re.split(r"(?<=\.)\s+", text.replace("\n\n", " ")) if s]
    assert len(pieces) >= 3
    assert all(p in PAPER for p in pieces), "only the paper's own sentences"
    assert "Write a critique" not in text


def test_crag_prompts_get_their_shapes():
    graded = dry_run_answer(
        render("grade", question="What recall does SPARTA reach?", passage=PAPER), "crag-grade"
    )
    assert re.match(r"YES\n\d+% of the question's terms", graded)
    unrelated = dry_run_answer(
        render("grade", question="Which wheat cultivars were grown?", passage=PAPER), "crag-grade"
    )
    assert unrelated.startswith("NO\n")
    queries = dry_run_answer(
        render("rewrite_queries", question="SPARTA recall", why_missed="none", n=3), "crag-rewrite"
    )
    assert len(queries.splitlines()) == 3
    chosen = dry_run_answer(
        render(
            "refine_batch",
            question="What recall does SPARTA reach on LongDocs?",
            passages=[["Unrelated words about cooking.", PAPER.split(". ")[1]]],
        ),
        "crag-refine-batch",
    )
    assert chosen == "1.2"
    evidence = [
        {"label": "SPARTA p. 3", "external": False, "score": 0.9, "reasoning": "states it", "text": PAPER}
    ]
    base = {**SAMPLES["answer"][0], "evidence": evidence, "not_found": "NOT FOUND"}
    answered = dry_run_answer(
        render("answer", **{**base, "question": "What recall does SPARTA reach on LongDocs?"}), "crag-answer"
    )
    assert answered == "On the LongDocs benchmark SPARTA reaches a recall of 81.2% at ten passages. [1]"
    refused = dry_run_answer(
        render("answer", **{**base, "question": "Which wheat cultivars grew best?"}), "crag-answer"
    )
    assert refused == "NOT FOUND"


def test_the_setting_selects_it_with_latency_and_a_concurrency_bound(reader_env, monkeypatch):
    from reader.llm.factory import build_inner_llm

    monkeypatch.setenv("READER_LLM_BASE_URL", "scripted:latency_ms=5")
    monkeypatch.setenv("READER_LLM_CONCURRENCY", "2")
    settings = load_settings()
    assert settings.generator.is_scripted and settings.verifier.is_scripted
    assert settings.generator.model_name == MODEL_NAME
    llm = build_inner_llm(settings, "verifier")
    assert isinstance(llm, DryRunLLM) and llm.scripted.latency_s == pytest.approx(0.005)
    assert llm._slots._value == 2
    answer = llm.complete(user(render("verify", claims=["x y z"], evidence=[])), stage="verify")
    assert answer.text == "[1] NO" and answer.model == MODEL_NAME

    monkeypatch.setenv("READER_LLM_BASE_URL", "scripted:speed=fast")
    with pytest.raises(ConfigError, match="latency_ms"):
        build_inner_llm(load_settings(), "generator")


def test_a_heading_prompt_gets_its_material_and_a_rewrite_drops_the_flagged():
    context = PAPER + " " + PAPER.replace("SPARTA", "The system")
    material = [s for s in re.split(r"(?<=\.) ", PAPER) if len(s.split()) >= 8]
    variables = dict(
        title="SPARTA",
        context=context,
        left_out=[],
        document="synthesis",
        heading="Method",
        material=material,
        facts=[],
        words=60,
        short_sentences=True,
        flagged=[],
        previous="",
        language_instruction="Write in English.",
    )
    draft = dry_run_answer(render("heading", **variables), "critique")
    assert draft == " ".join(material[:2])  # the heading's own sentences, no heading line

    flagged = material[0]
    again = render("heading", **{**variables, "flagged": [flagged], "previous": draft})
    rewritten = dry_run_answer(again, "regenerate-critique")
    assert flagged not in rewritten
    assert rewritten.strip() == draft.replace(flagged, "").strip()
