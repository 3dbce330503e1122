"""The follow-up questioner on reviewed papers: how many of its questions the paper answers, and
the answers with their sources, written out to be read next to the papers.

    READER_HOME=/tmp/rh14 .venv/bin/reader review ../shared/papers/*.pdf      # first, the reviews
    .venv/bin/python -m benchmarks.bench_followup --home /tmp/rh14 --out /tmp/followups.json

A paper whose review passed its audit has its follow-up questions stored with the review; they
are read as stored. With `--ask-failed`, a paper whose review did not pass gets its questions
written and answered here as the questioner would (not stored), and they are counted apart: the
product asks none for it. A question is answered when the pipeline did not refuse ("Not found in
the papers."); whether the answer is right is for a reader of the paper to judge, so each answer
is printed with its pages and sources' opening words.
"""

from __future__ import annotations

import argparse
import json
import os

from benchmarks.common import wilson


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", required=True, help="a READER_HOME whose papers were reviewed")
    parser.add_argument("--out", default="/tmp/followups.json", help="where the questions and answers go")
    parser.add_argument("--ask-failed", action="store_true", help="ask for the reviews that did not pass too")
    args = parser.parse_args()
    os.environ["READER_HOME"] = args.home
    from sqlalchemy import select

    from reader.crag import followup
    from reader.crag.pipeline import crag_config
    from reader.facade import Reader
    from reader.store.queries import followups_of, library_titles
    from reader.store.tables import Analysis, Paper

    app = Reader()
    services = app.services
    with services.db() as session:
        titles = library_titles(session)
        papers = session.scalars(select(Paper).order_by(Paper.title)).all()
        reviewed = {}
        for paper in papers:
            analyses = session.scalars(select(Analysis).where(Analysis.paper_id == paper.id)).all()
            if analyses:
                reviewed[paper.id] = (
                    [a.final_text for a in analyses],
                    [a.flagged_ratio for a in analyses],
                    followups_of(session, paper.id),
                )
    rows = []
    for paper_id, (texts, ratios, stored) in reviewed.items():
        passed = followup.audit_passed(ratios)
        items = [
            {"question": f.question, "answer": f.answer, "not_found": f.not_found, "sources": f.sources}
            for f in stored
        ]
        if not passed and args.ask_failed:
            questions, _ = followup.write_questions(
                titles.get(paper_id, ""),
                followup.open_points(texts),
                services.generator,
                services.settings.followup,
            )
            for question in questions:
                result = services.answer(
                    question, paper_id, crag_config(services.settings.crag), titles=titles
                )
                items.append(
                    {
                        "question": question,
                        "answer": result.answer,
                        "not_found": result.not_found,
                        "sources": [
                            {"label": s.source_label, "pages": s.pages, "text": s.refined or s.text}
                            for s in result.sources
                        ],
                    }
                )
        for item in items:
            rows.append({"paper": titles.get(paper_id, paper_id), "audit_passed": passed, **item})
        print(
            f"\n## {titles.get(paper_id, paper_id)[:80]}  (ratios {', '.join(f'{r:.2f}' for r in ratios)}; "
            f"audit {'passed' if passed else 'not passed'}; {len(items)} questions)"
        )
        for item in items:
            pages = ", ".join(str(s.get("pages")) for s in item["sources"])
            print(
                f"- Q: {item['question']}\n  A: {' '.join(item['answer'].split())[:600]}\n  pages: {pages or '-'}"
            )
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(rows, fh, ensure_ascii=False, indent=1)
    print(f"\n{len(reviewed)} reviewed papers; written to {args.out}")
    for label, subset in (
        ("stored with a passed review", [r for r in rows if r["audit_passed"]]),
        ("asked here for a review that did not pass", [r for r in rows if not r["audit_passed"]]),
        ("all", rows),
    ):
        if subset:
            answered = sum(not r["not_found"] for r in subset)
            low, high = wilson(answered, len(subset))
            print(
                f"answered ({label}): {answered}/{len(subset)} = {answered / len(subset):.2f} [{low:.2f}, {high:.2f}]"
            )


if __name__ == "__main__":
    main()
