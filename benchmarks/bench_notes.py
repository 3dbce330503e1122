"""The quality of the notes: `reader read` on the 14 shared papers, by a baseline revision and by
the current code, each document measured as a researcher would read it.

    .venv/bin/python -m benchmarks.bench_notes --baseline 28e590b --save /tmp/notes
    .venv/bin/python -m benchmarks.bench_notes --save /tmp/notes --arms current   # one arm
    .venv/bin/python -m benchmarks.bench_notes --save /tmp/notes --report         # figures only
    .venv/bin/python -m benchmarks.bench_notes --save /tmp/notes --arms endpoint
    .venv/bin/python -m benchmarks.bench_notes --save /tmp/notes --from-home /tmp/rh14  # a batch review's

The endpoint arm reads through a loopback OpenAI-compatible server (tests/loopback_openai.py) at
ENDPOINT capabilities, answering as the dry-run LLM does (each heading with its material's
sentences, each claim by word overlap): it shows the endpoint path (sizes, calls, the
sampling sent), not a model's quality.

Each read is the real command in a fresh READER_HOME (embedded model, cache off; see
benchmarks.bench_read), paper by paper, the baseline's read then the current one's, so both arms
see the same machine. Its `--json` is saved as SAVE/ARM/PAPER.json, and a paper whose file is
already there is not read again, so the arms can run one after the other. The figures
(benchmarks.notes_quality) are computed from the saved reads and the paper ingested by the
current code; the worst three current documents are printed in full. `--from-home` measures the
reviews stored in a READER_HOME by `reader review` instead (saved as the current arm; wall time is
each review job's, which shares the machine with the batch's other worker).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from benchmarks.bench_read import export, paper_path, read_once

PAPERS = [
    "acl2007_P07-1088.pdf",
    "acl2012_P12-1002_dyer12.pdf",
    "acl2014_P14-1059.pdf",
    "acl2020_2kenize.pdf",
    "acl2020_s2orc_2020.acl-main.447.pdf",
    "acl2020_specter_2020.acl-main.207.pdf",
    "acl2023_tutorial_goal_awareness_2023.acl-tutorials.1.pdf",
    "eacl2023_longeval_2023.eacl-main.121.pdf",
    "iop_jpcs2188_012011.pdf",
    "mdpi_futureinternet2014_fi6010061.pdf",
    "naacl2013_roark13.pdf",
    "naacl2018_litgraph_N18-3011.pdf",
    "neuron_perspective_rhythmic_attentional_scanning.pdf",
    "plosone2018_wheat_metabolomics.pdf",
]


def run_arm(
    arm: str, code: Path | None, papers: list[str], save: Path, extra_env: dict | None = None
) -> None:
    out = save / arm
    out.mkdir(parents=True, exist_ok=True)
    for name in papers:
        target = out / f"{name}.json"
        if target.exists():
            continue
        data = read_once(paper_path(name), code, None, extra_env)
        target.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        print(
            f"{arm} {name}: wall {data['wall']:.0f} s · {data['llm_calls']} calls · "
            f"{data['tokens']:,d} tokens · load {data['load']:.1f}",
            flush=True,
        )


def run_endpoint_arm(papers: list[str], save: Path) -> None:
    from reader.llm.dryrun import answer_generate, answer_verify
    from tests.loopback_openai import LoopbackOpenAI

    def respond(prompt: str) -> str:
        return answer_verify(prompt) if "Claims:" in prompt else answer_generate(prompt, per_heading=8)

    with LoopbackOpenAI(respond=respond, models=("loopback",)) as server:
        env = {
            "READER_LLM_BASE_URL": server.base_url,
            "READER_LLM_MODEL": "loopback",
            "READER_LLM_API_KEY": "k",
        }
        run_arm("endpoint", None, papers, save, env)
        sent = [
            r["json"] for r in server.chat_requests if "Claims:" not in r["json"]["messages"][-1]["content"]
        ]
    if sent:
        print(
            f"endpoint: {len(sent)} writing calls; max_tokens {sorted({r['max_tokens'] for r in sent})}; "
            f"sampling sent: {sorted({k for r in sent for k in r if k.endswith('penalty')}) or 'none'}"
        )


def save_reviews(home: Path, save: Path, papers: list[str]) -> None:
    """The reviews stored in `home` as the current arm's saved reads (the fields notes_quality uses)."""
    import os

    os.environ["READER_HOME"] = str(home)
    from sqlalchemy import func, select

    from reader.facade import Reader
    from reader.store.tables import Analysis, LLMCall, Paper, ReviewJob

    (save / "current").mkdir(parents=True, exist_ok=True)
    with Reader().services.db() as session:
        for paper in session.scalars(select(Paper)):
            name = paper.file_name or Path(paper.source_path).name
            analyses = session.scalars(select(Analysis).where(Analysis.paper_id == paper.id)).all()
            if name not in papers or not analyses:
                continue
            calls, tokens = session.execute(
                select(func.count(), func.sum(LLMCall.prompt_tokens + LLMCall.completion_tokens)).where(
                    LLMCall.paper_id == paper.id
                )
            ).one()
            job = session.scalars(select(ReviewJob).where(ReviewJob.paper_id == paper.id)).first()
            wall = (job.finished_at - job.started_at).total_seconds() if job and job.finished_at else 0.0
            data = {
                "analyses": [
                    {
                        "kind": a.kind,
                        "final_text": a.final_text,
                        "regenerations": a.regenerations,
                        "ratio_per_iteration": [i.flagged_ratio for i in a.iterations] or [a.flagged_ratio],
                    }
                    for a in analyses
                ],
                "llm_calls": calls,
                "tokens": tokens or 0,
                "wall": wall,
            }
            (save / "current" / f"{name}.json").write_text(
                json.dumps(data, ensure_ascii=False), encoding="utf-8"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="REV", help="the revision the baseline arm reads with")
    parser.add_argument("--save", type=Path, required=True, help="folder of the saved reads")
    parser.add_argument(
        "--arms", nargs="+", default=["baseline", "current"], choices=["baseline", "current", "endpoint"]
    )
    parser.add_argument("--papers", nargs="+", default=PAPERS)
    parser.add_argument("--report", action="store_true", help="only print the figures of the saved reads")
    parser.add_argument("--from-home", type=Path, help="measure the reviews stored in this READER_HOME")
    args = parser.parse_args()
    if args.from_home:
        save_reviews(args.from_home, args.save, args.papers)
        args.report = True
    if "baseline" in args.arms and not args.baseline and not args.report:
        parser.error("the baseline arm needs --baseline REV")
    if not args.report:
        code = export(args.baseline) if "baseline" in args.arms else None
        try:
            for name in args.papers:  # paper by paper: both arms see the same machine
                for arm in (a for a in args.arms if a != "endpoint"):
                    run_arm(arm, code if arm == "baseline" else None, [name], args.save)
        finally:
            if code is not None:
                shutil.rmtree(code, ignore_errors=True)
        if "endpoint" in args.arms:
            run_endpoint_arm(args.papers, args.save)
    from benchmarks.notes_quality import report

    report(args.save, args.papers)


if __name__ == "__main__":
    main()
