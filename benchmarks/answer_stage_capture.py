"""Run the CRAG pipeline up to the writer for every labelled question and save what each stage held
(retrieved, graded with P(YES), kept, refined, and each graded passage's source label), development
questions first, one JSON line each; an existing file is continued. Used for docs/measurements/ask.md "The
grader's P(YES) decides".

The pipeline runs through `ask(..., stop_before="generate", on_step=...)`, with the library's
LLM roles, index and the CRAG settings of the environment, except the refusal rule: "writer",
the rule whose inputs were measured (it refines).

    .venv/bin/python -m benchmarks.answer_stage_capture OUT.jsonl   (home: /tmp/reader-bench-crag)
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
import time
from pathlib import Path

from benchmarks.common import DEV_QUESTION_IDS, ROOT
from reader.crag.calibrate import load_questions
from reader.crag.grounded import audit_grounded
from reader.crag.pipeline import GENERATE, REFINE, CragConfig, ask, crag_config
from reader.facade import Reader
from reader.store.queries import library_titles, paper_keys

HOME = Path("/tmp/reader-bench-crag")


def config_from(settings) -> CragConfig:
    """The configured CRAG settings (settings.crag) with the writer's refusal rule."""
    return crag_config(dataclasses.replace(settings.crag, refusal="writer"))


def candidate(c) -> dict:
    g = c.grade
    return {
        "key": c.key,
        "paper_id": c.paper_id,
        "chunk_id": c.chunk_id,
        "page_start": c.page_start,
        "page_end": c.page_end,
        "text": c.text,
        "refined": c.refined,
        "origin": c.origin,
        "fused_score": c.fused_score,
        "external": c.external,
        "grade": None
        if g is None
        else {"score": g.score, "p_yes": g.p_yes, "reasoning": g.reasoning, "ambiguous": g.ambiguous},
    }


def snapshot(run) -> dict:
    """What the run holds once it has refined: the writer's inputs."""
    everything = run.graded + run.kept + run.refined
    return {
        "route": run.route,
        "confidence": run.confidence,
        "kept": [candidate(c) for c in run.kept],
        "refined": [candidate(c) for c in run.refined],
        "graded": [candidate(c) for c in run.graded],
        "retrieved": [candidate(c) for c in run.retrieved],
        "rewrites": run.rewrites,
        "calls": run.generator.calls,
        "label": {c.key: run.label(c) for c in everything},
    }


def main() -> None:
    out = Path(sys.argv[1])
    done = {json.loads(line)["id"] for line in out.open()} if out.exists() else set()
    questions = load_questions(ROOT / "eval" / "questions.jsonl")
    questions = [q for q in questions if q.id in DEV_QUESTION_IDS] + [
        q for q in questions if q.id not in DEV_QUESTION_IDS
    ]
    app = Reader(home=HOME, use_cache=False)
    with app.services.db() as session:
        keys, titles = paper_keys(session), library_titles(session)
    config = config_from(app.settings)
    with out.open("a") as fh:
        for q in questions:
            if q.id in done:
                continue
            paper_id = keys.get(q.paper) if q.paper else None
            snap: dict = {}
            started = time.time()
            ask(
                q.question,
                paper_id=paper_id,
                generator=app.services.generator,
                verifier=app.services.verifier,
                search=app.services.search_index.search,
                check_grounded=functools.partial(audit_grounded, checker=app.services.checker),
                titles=titles,
                config=config,
                external=app.questions.external_searches(),
                stop_before=GENERATE,
                on_step=lambda step, run: snap.update(snapshot(run)) if step == REFINE else None,
            )
            row = {
                "id": q.id,
                "question": q.question,
                "paper_id": paper_id,
                "answer_ids": [keys.get(p) for p in q.answer_papers],
                "seconds": round(time.time() - started, 1),
                **snap,
            }
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            fh.flush()
            print(
                q.id, row.get("route"), len(row.get("kept", [])), row.get("calls"), row["seconds"], flush=True
            )


if __name__ == "__main__":
    main()
