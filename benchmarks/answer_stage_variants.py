"""Answer-stage rules run on the inputs answer_stage_capture.py saved, scored strictly as `reader
calibrate` scores: ref-w-quote (refined evidence, the writer may refuse, quote 0.9), p30-n (every
passage at P(YES) >= 0.3, whole, the writer may not refuse), pyes60 (the p_yes rule: below a best
P(YES) of 0.6 not found without the writer, else p30-n), *-q (quote, no writer), *-norel (the
answer prompt's source lines without the grader's relevance and reason).

    .venv/bin/python -m benchmarks.answer_stage_variants CAPTURE.jsonl OUT.jsonl --part dev|held --variants ref-w-quote,pyes60
"""

import argparse
import json
import re
import time
from pathlib import Path

from benchmarks.common import DEV_QUESTION_IDS as DEV  # the 27 development questions
from benchmarks.common import ROOT
from reader.crag import generate as gen
from reader.crag.calibrate import load_questions, missing_terms
from reader.crag.evidence import Candidate
from reader.crag.generate import closest_sentences, generate_answer
from reader.crag.grade import Grade
from reader.text.tokens import estimate_tokens


def pyes(d):
    g = d["grade"]
    return 0.0 if g is None else (g["p_yes"] if g["p_yes"] is not None else g["score"])


def by_pyes(r, tau, budget=1500):
    seen, out, spent = set(), [], 0
    for d in sorted(r["graded"], key=lambda d: -pyes(d)):
        if d["key"] in seen or pyes(d) < tau:
            continue
        seen.add(d["key"])
        cost = estimate_tokens(d["text"])
        if out and spent + cost > budget:
            continue
        out.append(d)
        spent += cost
    return out


def label_of(r, c):
    """The source label the pipeline gave this passage (answer_stage_capture saves one for every graded passage)."""
    return r["label"][c.key]


def build(d, refined=None):
    g = d["grade"]
    c = Candidate(
        key=d["key"],
        text=d["text"],
        paper_id=d["paper_id"],
        chunk_id=d["chunk_id"],
        page_start=d["page_start"],
        page_end=d["page_end"],
        fused_score=d["fused_score"],
        origin=d["origin"],
        external=d["external"],
        grade=None
        if g is None
        else Grade(d["key"], g["score"], g["ambiguous"], g["reasoning"], p_yes=g["p_yes"]),
    )
    c.refined = d["refined"] if refined is None else refined
    return c


# The grader's part of a source line of the answer prompt: "[2] Title, p. 4 — relevance 0.80: the reason".
GRADER_PART = re.compile(r" — relevance \d(?:\.\d+)?: [^\n]*")


class NoRelevance:
    """The answer prompt with its source lines cut after the label: no grader's relevance or reason.
    A prompt without such a line is an error (the prompt changed and the variant would test nothing)."""

    def __init__(self, llm):
        self.llm = llm

    def __getattr__(self, name):
        return getattr(self.llm, name)

    def complete(self, messages, **kw):
        if kw.get("stage") == "crag-answer":
            cut = [GRADER_PART.subn("", m["content"]) for m in messages]
            if not any(n for _, n in cut):
                raise ValueError("NoRelevance: no '— relevance 0.80: …' source line in the answer prompt")
            messages = [dict(m, content=text) for m, (text, _) in zip(messages, cut)]
        return self.llm.complete(messages, **kw)


def run_variant(v, r, qs, llm):
    q = qs[r["id"]]
    if v == "pyes60":  # the p_yes rule as built: below 0.6 not found without the writer, else p30-n
        best = max((pyes(d) for d in r["graded"]), default=0.0)
        if best < 0.6:
            return {
                "variant": v,
                "id": q.id,
                "answerable": q.answerable,
                "right": not q.answerable,
                "not_found": True,
                "missing": [],
                "answer": "(not asked)",
                "seconds": 0.0,
                "route": r["route"],
                "best_p_yes": best,
                "prompt_tokens": 0,
            }
        return dict(run_variant("p30-n", r, qs, llm), variant=v)

    def label(c):
        return label_of(r, c)

    evidence_kind, refusal = v.split("-")[:2]
    extra = v.split("-")[2:]
    if evidence_kind == "ref":
        ev = [build(d) for d in r["refined"]]
    elif evidence_kind == "full":
        ev = [build(d, refined="") for d in r["kept"]]
    elif evidence_kind.startswith("p") and evidence_kind[1:].isdigit():
        ev = [build(d, refined="") for d in by_pyes(r, int(evidence_kind[1:]) / 100)]
        for i, c in enumerate(ev):  # keep the P(YES) order through select_within_budget
            c.grade.score, c.fused_score = 1.0, -i
    elif evidence_kind == "close":
        ev = [build(d, refined=" ".join(closest_sentences(q.question, d["text"], 3))) for d in r["kept"]]
    may_refuse = refusal == "w" or (refusal == "g" and r["route"] != "correct")
    best = max((pyes(d) for d in r["graded"]), default=0.0)
    model = NoRelevance(llm) if "norel" in extra else llm
    t = time.time()
    if refusal == "q":  # no writer: quote the closest kept sentences of the two best passages
        ans = gen.Answer(gen.not_found_sentinel(q.question), not_found=True)
        if ev:
            chosen = gen.select_within_budget(ev, 1500)
            text = gen.quoted_answer(chosen, 0.0, q.question)
            ans = gen.Answer(text, evidence=chosen, quoted=True) if text else ans
    else:
        ans = generate_answer(
            q.question,
            ev,
            model,
            label=label,
            quote_threshold=0.9 if "quote" in extra else None,
            may_refuse=may_refuse,
        )
    secs = time.time() - t
    cited = {c.paper_id for c in ans.evidence} if not ans.not_found else set()
    expected = [p for p in r["answer_ids"] if p]
    if q.answerable:
        miss = missing_terms(q.expected_terms, ans.text)
        right = (not ans.not_found) and all(p in cited for p in expected) and not miss
    else:
        miss, right = [], ans.not_found
    return {
        "variant": v,
        "id": q.id,
        "answerable": q.answerable,
        "right": right,
        "not_found": ans.not_found,
        "missing": miss,
        "answer": ans.text,
        "seconds": round(secs, 1),
        "route": r["route"],
        "best_p_yes": best,
        "prompt_tokens": ans.completion.prompt_tokens if ans.completion else 0,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("out")
    ap.add_argument("--variants", default="cur")
    ap.add_argument("--part", default="dev")
    args = ap.parse_args()
    qs = {q.id: q for q in load_questions(ROOT / "eval" / "questions.jsonl")}
    rows = [json.loads(line) for line in open(args.capture)]
    rows = [r for r in rows if (r["id"] in DEV) == (args.part == "dev")]
    done = set()
    if Path(args.out).exists():
        done = {(j["variant"], j["id"]) for j in map(json.loads, open(args.out))}

    from reader.facade import Reader

    llm = Reader(home=Path("/tmp/reader-bench-crag"), use_cache=False).services.generator
    with open(args.out, "a") as f:
        for r in rows:
            for v in args.variants.split(","):
                if (v, r["id"]) in done:
                    continue
                row = run_variant(v, r, qs, llm)
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
                f.flush()
                print(
                    v,
                    row["id"],
                    row["right"],
                    row["seconds"],
                    row["answer"][:100].replace("\n", " "),
                    flush=True,
                )


if __name__ == "__main__":
    main()
