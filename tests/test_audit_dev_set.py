"""The audit development set (eval/audit_dev.jsonl) is well formed and its quotes are real."""

import json
import re
from collections import Counter

import pytest
from conftest import ROOT, SHARED_PAPERS

DEV = ROOT / "eval" / "audit_dev.jsonl"
FABRICATED = ("changed_number", "swapped_number", "invented_name", "invented_claim", "reversed_relation")


def rows():
    return [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_dev_set_has_the_kinds_the_audit_is_measured_on():
    items = rows()
    kinds = Counter(r["kind"] for r in items)
    assert len(items) >= 150 and len({r["id"] for r in items}) == len(items)
    assert all(kinds[k] >= 12 for k in FABRICATED), kinds
    assert 0.4 <= kinds["faithful"] / len(items) <= 0.6
    assert sum(r["lang"] == "zh" for r in items) >= 20
    for r in items:
        assert (r["label"] == "supported") == (r["kind"] == "faithful"), r["id"]
        assert r["sentence"].strip() and r["quote"].strip() and r["page"] >= 1, r["id"]
    assert len({r["paper"] for r in items}) == 14


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"-\n", "", text)).strip()


@pytest.mark.skipif(not SHARED_PAPERS.exists(), reason="needs ../shared/papers")
def test_every_quote_is_on_its_page():
    import pymupdf

    missing = []
    by_paper: dict[str, list[dict]] = {}
    for r in rows():
        by_paper.setdefault(r["paper"], []).append(r)
    for paper, items in by_paper.items():
        with pymupdf.open(SHARED_PAPERS / paper) as doc:
            pages = [_norm(page.get_text()) for page in doc]
        for r in items:
            if _norm(r["quote"]) not in pages[r["page"] - 1]:
                missing.append(r["id"])
    assert missing == []


def test_the_benchmark_counts_a_sentence_the_extraction_check_contradicted_as_flagged():
    """The audit adds an extraction check's contradiction to the sentence's guard reasons, so
    re-scoring saved results at a threshold must count it whatever the verifier's P(YES)."""
    from benchmarks.bench_audit_dev import flagged

    item = {
        "mode": "model",
        "guard_reasons": [],
        "answer": None,
        "p_yes": None,
        "has_evidence": True,
        "verdict_reasons": ["extraction: the passage gives “23” for the blank in “… ___% lower …”, not “46”"],
    }
    assert flagged(item, 0.17)
    assert not flagged(item, 0.17, guards=False)  # the verifier alone did not flag it
    agreed = dict(
        item, verdict_reasons=["extraction: the passage gives “46” for the blank, as the sentence does"]
    )
    assert not flagged(agreed, 0.17)
