"""The follow-up questioner on reviewed papers: how many of its questions the paper answers, and
the answers with their sources, written out to be read next to the papers.

    READER_HOME=/tmp/rh14 .venv/bin/reader review ../shared/papers/*.pdf      # first, the reviews
    .venv/bin/python -m benchmarks.bench_followup --home /tmp/rh14 --out /tmp/followups.json

A paper whose review passed its audit has its follow-up questions stored with the review; they
are read as stored. `--ask PAPER…` (title prefixes, or `all`) asks them again with the current
code, through Services.follow_up as a review would, and stores them in place of the old ones (a
benchmark home only): for papers reviewed before a change to the questioner, and, with
`--failed-too`, for reviews that did not pass their audit (the product asks none for them; they
are counted apart). A question is answered when the pipeline did not refuse ("Not found in the
papers."); whether the answer is right is for a reader of the paper to judge, so each answer is
printed with its pages and its sources' opening words.
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
    parser.add_argument("--ask", nargs="*", default=[], help="papers (title prefixes, or all) to ask again")
    parser.add_argument("--failed-too", action="store_true", help="ask for reviews that did not pass too")
    args = parser.parse_args()
    os.environ["READER_HOME"] = args.home
    from sqlalchemy import select

    from reader.audit.decided import TOOL
    from reader.crag import followup
    from reader.facade import Reader
    from reader.store.queries import followups_of, library_titles
    from reader.store.tables import Analysis

    services = Reader().services
    with services.db() as session:
        titles = library_titles(session)
        reviews = {}
        for analysis in session.scalars(select(Analysis).order_by(Analysis.paper_id, Analysis.kind)):
            texts, ratios, settled = reviews.setdefault(analysis.paper_id, ([], [], set()))
            texts.append(analysis.final_text)
            ratios.append(analysis.flagged_ratio)
            if analysis.iterations:
                settled |= {v.text for v in analysis.iterations[-1].verdicts if v.decided_by == TOOL}
    rows = []
    for paper_id, (texts, ratios, settled) in sorted(reviews.items(), key=lambda kv: titles.get(kv[0], "")):
        title = titles.get(paper_id, paper_id)
        passed = followup.audit_passed(ratios)
        if (passed or args.failed_too) and any(a == "all" or title.startswith(a) for a in args.ask):
            services.follow_up(
                paper_id, texts, [0.0], n=services.settings.followup, settled=settled, on_progress=print
            )
        with services.db() as session:
            items = followups_of(session, paper_id)
        rows += [{"paper": title, "audit_passed": passed, **item.to_json()} for item in items]
        ratios_shown = ", ".join(f"{r:.2f}" for r in ratios)
        print(f"\n## {title[:80]}  (ratios {ratios_shown}; audit {'passed' if passed else 'not passed'})")
        for item in items:
            pages = ", ".join(str(s["pages"]) for s in item.sources)
            print(
                f"- Q: {item.question}\n  A: {' '.join(item.answer.split())[:700]}\n  pages: {pages or '-'}"
            )
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(rows, fh, ensure_ascii=False, indent=1)
    print(f"\n{len(reviews)} reviewed papers; written to {args.out}")
    for label, subset in (
        ("reviews that passed their audit", [r for r in rows if r["audit_passed"]]),
        ("asked here for reviews that did not pass", [r for r in rows if not r["audit_passed"]]),
    ):
        if subset:
            answered = sum(not r["not_found"] for r in subset)
            low, high = wilson(answered, len(subset))
            print(
                f"answered ({label}): {answered}/{len(subset)} = {answered / len(subset):.2f} [{low:.2f}, {high:.2f}]"
            )


if __name__ == "__main__":
    main()
