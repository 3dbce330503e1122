"""How well passage grades separate, on the 88 questions of eval/questions.jsonl over the 14
shared papers: the trained relevance grader against the retrieval's own scores and the claim
checker reused on (question, passage), and optionally the embedded LLM's batched YES/NO grade.

Each question's candidates are retrieved as `reader ask` retrieves them (the fused search of its
paper, or of the library when it names none). A passage is labelled relevant when it holds the
question's expected terms (all of them; half of them for a list of three or more); every passage
of an unanswerable question is not relevant. Reported, with bootstrap 95% intervals:

- passage level: AUC of relevant vs not-relevant passages (answerable questions' passages and
  unanswerable questions' passages together);
- question level: AUC of answerable vs unanswerable questions by the best grade among the
  question's candidates;
- on the development questions (the 27 of benchmarks.common.DEV_QUESTION_IDS) a threshold is
  chosen (best balanced accuracy at the question level) and reported on the 61 held out;
- the grader's seconds per question (all candidates, 2 threads).

    .venv/bin/python -m benchmarks.bench_grader [--llm] [--rows rows.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from benchmarks.calibration_split import auc, auc_interval
from benchmarks.common import DEV_QUESTION_IDS, ROOT, SHARED_PAPERS, ingested

QUESTIONS = ROOT / "eval" / "questions.jsonl"


def relevant(text: str, terms: list[str]) -> bool:
    if not terms:
        return False
    low = text.lower()
    held = sum(any(alt.lower() in low for alt in term.split("|")) for term in terms)
    return held == len(terms) if len(terms) < 3 else held >= len(terms) / 2


def answerable(q: dict) -> bool:
    return q["answer_paper"] != "none"


def fmt_auc(pos: list[float], neg: list[float]) -> str:
    value = auc(pos, neg)
    if value is None:
        return "n/a"
    low, high = auc_interval(pos, neg)
    return f"{value:.3f} [{low:.3f}, {high:.3f}] ({len(pos)} vs {len(neg)})"


def best_threshold(rows: list[dict], key: str) -> float:
    """The question-level threshold of best balanced accuracy on these rows."""
    values = sorted({r[key] for r in rows})
    best, best_at = -1.0, 0.5
    for at in values:
        pos = [r for r in rows if r["answerable"]]
        neg = [r for r in rows if not r["answerable"]]
        acc = (
            sum(r[key] >= at for r in pos) / max(1, len(pos))
            + sum(r[key] < at for r in neg) / max(1, len(neg))
        ) / 2
        if acc > best:
            best, best_at = acc, at
    return best_at


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", default="/tmp/reader-bench-crag")  # bench_crag's library
    ap.add_argument(
        "--llm", action="store_true", help="also grade with the embedded LLM (slow: ~35 s a question)"
    )
    ap.add_argument("--rows", type=Path, default=None, help="write each passage's scores here (JSON lines)")
    args = ap.parse_args()
    os.environ["READER_HOME"] = args.home
    from reader.checker.model import shared_checker
    from reader.crag.correct import retrieve_all
    from reader.crag.grade import grade_in_batches
    from reader.facade import Reader
    from reader.grader.model import shared_grader

    questions = [json.loads(line) for line in QUESTIONS.open(encoding="utf-8") if line.strip()]
    app = Reader(use_cache=False)
    stored = ingested(
        app, sorted(p.name for p in SHARED_PAPERS.glob("*.pdf"))
    )  # library-wide questions need all
    grader, checker = shared_grader(), shared_checker()
    grader.load()
    checker.load()
    search = app.services.search_index.search
    passages: list[dict] = []
    per_question: list[dict] = []
    seconds: list[float] = []
    for q in questions:
        paper_id = stored.get(q["paper"]) if q.get("paper") else None
        candidates = retrieve_all([q["question"]], search, paper_id, origin="retrieval")
        texts = [c.text for c in candidates]
        started = time.perf_counter()
        graded = grader.grade(q["question"], texts)
        seconds.append(time.perf_counter() - started)
        checked = checker.score([q["question"]] * len(texts), [[g.window] for g in graded])
        llm = [None] * len(texts)
        if args.llm:
            grades = grade_in_batches(
                q["question"], [(c.key, c.text, c.paper_id) for c in candidates], app.services.generator
            )
            llm = [g.p_yes if g.p_yes is not None else g.score for g in grades]
        rows = []
        for c, g, k, lg in zip(candidates, graded, checked, llm):
            rows.append(
                {
                    "id": q["id"],
                    "relevant": answerable(q) and relevant(c.text, q.get("expected_terms", [])),
                    "model": g.p_relevant,
                    "checker": k.p_supported,
                    "fused": c.fused_score,
                    "llm": lg,
                }
            )
        passages += rows
        per_question.append(
            {
                "id": q["id"],
                "answerable": answerable(q),
                "dev": q["id"] in DEV_QUESTION_IDS,
                "any_relevant": any(r["relevant"] for r in rows),
                **{
                    key: max((r[key] for r in rows if r[key] is not None), default=0.0)
                    for key in _keys(args.llm)
                },
            }
        )
        print(f"  {q['id']}: {len(rows)} passages, best model {per_question[-1]['model']:.3f}", flush=True)
    if args.rows:
        with args.rows.open("w") as fh:
            for r in passages:
                fh.write(json.dumps(r) + "\n")
    print(
        f"\n{len(questions)} questions, {len(passages)} passages ({sum(r['relevant'] for r in passages)} relevant)"
    )
    print(
        f"grader seconds per question: median {statistics.median(seconds):.2f}, max {max(seconds):.2f} "
        f"({statistics.mean(len([p for p in passages if p['id'] == q['id']]) for q in questions):.1f} "
        "passages on average)"
    )
    for key in _keys(args.llm):
        print(f"\n## {key}")
        for part, ids in (("development", True), ("held out", False)):
            mine = {r["id"] for r in per_question if r["dev"] == ids}
            rows = [p for p in passages if p["id"] in mine and p[key] is not None]
            print(
                f"  {part} passages: AUC "
                + fmt_auc(
                    [r[key] for r in rows if r["relevant"]], [r[key] for r in rows if not r["relevant"]]
                )
            )
            qs = [r for r in per_question if r["dev"] == ids]
            print(
                f"  {part} questions (answerable vs not): AUC "
                + fmt_auc(
                    [r[key] for r in qs if r["answerable"]], [r[key] for r in qs if not r["answerable"]]
                )
            )
        dev = [r for r in per_question if r["dev"]]
        held = [r for r in per_question if not r["dev"]]
        at = best_threshold(dev, key)
        pos = [r for r in held if r["answerable"]]
        neg = [r for r in held if not r["answerable"]]
        print(
            f"  threshold chosen on development: {at:.3f}; held out: answerable above "
            f"{sum(r[key] >= at for r in pos)}/{len(pos)}, unanswerable below {sum(r[key] < at for r in neg)}/{len(neg)}"
        )


def _keys(llm: bool) -> list[str]:
    return ["model", "checker", "fused"] + (["llm"] if llm else [])


if __name__ == "__main__":
    main()
