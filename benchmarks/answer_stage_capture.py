"""Run the CRAG pipeline up to the writer for every labelled question and save what each stage held
(retrieved, graded with P(YES), kept, refined), development questions first, one JSON line each;
an existing file is continued. Used for docs/ask.md "The grader's P(YES) decides".

    .venv/bin/python benchmarks/answer_stage_capture.py OUT.jsonl   (home: /tmp/reader-bench-crag)
"""
from pathlib import Path
import json
import sys
import time
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import os
os.environ["READER_CRAG_REFUSAL"] = "writer"  # the measured inputs: the writer rule refines
from reader.facade import Reader
from reader.crag import pipeline
from reader.crag.calibrate import load_questions
from reader.store.queries import paper_keys

out = Path(sys.argv[1])
done = {json.loads(l)["id"] for l in out.open()} if out.exists() else set()
qs = load_questions(Path(__file__).resolve().parents[1] / "eval" / "questions.jsonl")
from calibration_split import DEV_IDS as DEV  # the 27 development questions
qs = [q for q in qs if q.id in DEV] + [q for q in qs if q.id not in DEV]
app = Reader(home=Path("/tmp/reader-bench-crag"), use_cache=False)
with app.db() as s: keys = paper_keys(s)

def cand(c):
    g = c.grade
    return {"key": c.key, "paper_id": c.paper_id, "chunk_id": c.chunk_id, "page_start": c.page_start,
            "page_end": c.page_end, "text": c.text, "refined": c.refined, "origin": c.origin,
            "fused_score": c.fused_score, "external": c.external,
            "grade": None if g is None else {"score": g.score, "p_yes": g.p_yes, "reasoning": g.reasoning,
                                             "ambiguous": g.ambiguous}}
snap = {}
def stop(run):
    snap.update(route=run.route, confidence=run.confidence, kept=[cand(c) for c in run.kept],
                refined=[cand(c) for c in run.refined], graded=[cand(c) for c in run.graded],
                retrieved=[cand(c) for c in run.retrieved], rewrites=run.rewrites,
                calls=run.generator.calls, label={c.key: run.label(c) for c in run.refined + run.kept})
    return pipeline.DONE
pipeline.STEPS[pipeline.GENERATE] = stop

with out.open("a") as f:
    for q in qs:
        if q.id in done: continue
        pid = keys.get(q.paper) if q.paper else None
        snap.clear(); t = time.time()
        r = app.ask(q.question, pid, store=False)
        row = {"id": q.id, "question": q.question, "paper_id": pid,
               "answer_ids": [keys.get(p) for p in q.answer_papers], "seconds": round(time.time() - t, 1), **snap}
        f.write(json.dumps(row, ensure_ascii=False) + "\n"); f.flush()
        print(q.id, row["route"], len(row["kept"]), row["calls"], row["seconds"], flush=True)
