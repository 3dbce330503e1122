"""Questions about citations (eval/citation_questions.jsonl) on the shared papers: routed to the
citation graph and answered right?

    .venv/bin/python -m benchmarks.bench_citation_questions --home /tmp/reader-bench-citations

The papers are ingested into the home on the first run (../shared/papers). Routing is the keyword
rules' by default (no model call); `--llm` lets the configured generator decide flagged questions
as `reader ask` does. A question is routed right when its intent is the expected kind; answered
right when the answer holds every expected term (case ignored), or, for a question whose answer is
that nothing cites, when the answer says so. Also: every question of eval/questions.jsonl must
still go to passage search (no loss there).
"""

from __future__ import annotations

import argparse
import json
import os
import time

from benchmarks.common import ROOT, SHARED_PAPERS, ingested, wilson


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", default="/tmp/reader-bench-citations")
    parser.add_argument("--questions", default=str(ROOT / "eval" / "citation_questions.jsonl"))
    parser.add_argument("--llm", action="store_true", help="let the configured LLM decide flagged questions")
    args = parser.parse_args()
    os.environ["READER_HOME"] = args.home
    from reader.crag.graph import graph_answer
    from reader.crag.intent import decide_intent
    from reader.facade import Reader
    from reader.store.db import transaction
    from reader.store.queries import library_titles

    app = Reader()
    ids = ingested(app, sorted(p.name for p in SHARED_PAPERS.glob("*.pdf")))
    questions = [json.loads(line) for line in open(args.questions, encoding="utf-8") if line.strip()]
    routed = right = 0
    started = time.perf_counter()
    for q in questions:
        intent = decide_intent(q["question"], app.services.generator if args.llm else None)
        paper = ids.get(q["paper"]) if q.get("paper") else None
        with transaction(app.services.db) as session:
            titles = library_titles(session)
            result = (
                graph_answer(session, q["question"], intent, paper, titles)
                if intent.route == "citations"
                else None
            )
        ok_route = intent.route == "citations" and intent.kind == q["kind"]
        answer = result.answer if result else ""
        if q.get("not_found"):
            ok = result is not None and result.not_found
        else:
            ok = result is not None and all(t.lower() in answer.lower() for t in q["expected_terms"])
        routed += ok_route
        right += ok and ok_route
        print(
            f"{q['id']} route {'ok ' if ok_route else 'NO '}{intent.kind or intent.route:<9} answer {'ok' if ok and ok_route else 'NO'}  {q['question']}"
        )
        if not (ok and ok_route):
            print("     " + answer.replace("\n", "\n     ")[:600])
    n = len(questions)
    ordinary = [
        json.loads(line)["question"] for line in open(ROOT / "eval" / "questions.jsonl", encoding="utf-8")
    ]
    kept = sum(decide_intent(question, None).route == "passages" for question in ordinary)
    low, high = wilson(right, n)
    print(
        f"\nrouted right {routed}/{n}; routed and answered right {right}/{n} ({right / n:.0%}, 95% {low:.0%}–{high:.0%}); "
        f"ordinary questions still to passages {kept}/{len(ordinary)}; {time.perf_counter() - started:.1f} s"
    )


if __name__ == "__main__":
    main()
