"""Speculative decoding in the embedded model (READER_SPECULATIVE), per prompt kind, against
no drafting in the same run.

The prompts are the pipeline's own: `reader read` and `reader ask` of a paper are run with the
dry-run LLM at the embedded model's sizes (SMALL_LOCAL), which records the first requests of each
stage (a writer's heading, a 4-claim verification, an answer); then each drafting setting loads
the embedded model and sends those requests as they were made (messages, temperature, sampling,
max_tokens, log-probabilities), in the same order, with llama.cpp's prompt cache on as in a read.
Printed per kind and setting: generated tokens per second and wall seconds, their ratios to `off`,
the tokens drafted and accepted, and whether every reply is the same text as without drafting.

    .venv/bin/python -m benchmarks.bench_speculative
    .venv/bin/python -m benchmarks.bench_speculative --settings off,ngram-simple,ngram-mod:4:16
    .venv/bin/python -m benchmarks.bench_speculative --requests /tmp/spec_requests.json

A setting is a mode, or mode:lookup:draft (the n-gram looked up and the longest draft, in tokens;
a bare mode runs with reader.llm.local.drafting_for's sizes). `--requests FILE` keeps the captured
requests there (captured when the file is missing), so runs can share them. With `--draft-model
GGUF`, the setting draft:N:P drafts with that model (at most N tokens, each at probability ≥ P)
instead of n-grams; no setting of reader offers it (docs/design/llm.md):

    .venv/bin/python -m benchmarks.bench_speculative --settings off,draft:8:0.6 --draft-model draft.gguf
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, SHARED_PAPERS

PAPER = SHARED_PAPERS / "acl2014_P14-1059.pdf"
FALLBACK_PAPER = ROOT / "papers" / "sample_paper.pdf"
# asked until the dry run's grader keeps a passage and the answer is written
QUESTIONS = ("What does the paper propose?", "What data set is the method evaluated on?")
# prompt kind -> (the stages whose first requests stand for it, in order; how many requests)
KINDS = {
    "writer": (("synthesis", "critique"), 3),
    "verify": (("audit", "verify"), 3),
    "answer": (("crag-answer",), 1),
}
DEFAULT_SETTINGS = "off,ngram-simple,ngram-map-k,ngram-mod"


class Recorder:
    """The dry-run LLM at the embedded model's sizes, keeping every request it is sent by stage."""

    supports_logprobs = True
    supports_sampling = True

    def __init__(self):
        from reader.llm.base import SMALL_LOCAL
        from reader.llm.dryrun import DryRunLLM

        self.inner = DryRunLLM()
        self.model = "speculative-bench-recorder"
        self.capabilities = SMALL_LOCAL
        self.requests: dict[str, list[dict]] = {}

    def complete(self, messages, *, temperature=0.0, max_tokens=512, stage="", paper_id=None, **kwargs):
        request = {"messages": messages, "temperature": temperature, "max_tokens": max_tokens, "seed": 0}
        request.update(kwargs.get("sampling") or {})
        if kwargs.get("logprobs"):
            request.update(logprobs=True, top_logprobs=kwargs["logprobs"])
        self.requests.setdefault(stage, []).append(request)
        return self.inner.complete(
            messages, temperature=temperature, max_tokens=max_tokens, stage=stage, paper_id=paper_id
        )


def capture(paper: Path) -> dict[str, list[dict]]:
    """kind -> the requests standing for it, from a dry-run read and question of `paper`."""
    from reader.facade import Reader

    recorder = Recorder()
    with tempfile.TemporaryDirectory() as home:
        app = Reader(home=home, llm=recorder, use_cache=False)
        app.read(paper, followup=False)
        for question in QUESTIONS:
            if "crag-answer" not in recorder.requests:
                app.ask(question, store=False)
    return {
        kind: [r for stage in stages for r in recorder.requests.get(stage, [])][:n]
        for kind, (stages, n) in KINDS.items()
    }


def parse_setting(text: str, draft_model: Path | None = None):
    from reader.llm.local import Drafting, drafting_for

    mode, *sizes = text.split(":")
    if mode == "draft":
        if draft_model is None:
            raise SystemExit("the setting draft:N:P needs --draft-model GGUF")
        n, p_min = sizes or ("8", "0.6")
        return Drafting("draft", draft=int(n), draft_model=str(draft_model), p_min=float(p_min))
    if not sizes:
        return drafting_for(mode)
    lookup, draft = (int(x) for x in sizes)
    return Drafting(mode, lookup=lookup, draft=draft)


def label(drafting) -> str:
    if drafting.mode == "draft":
        return f"draft:{drafting.draft}:{drafting.p_min}"
    return "off" if drafting.mode == "off" else f"{drafting.mode}:{drafting.lookup}:{drafting.draft}"


def run_setting(model_path: Path, drafting, requests: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """kind -> per request: text, generated tokens, generation seconds, wall seconds, drafted, accepted."""
    from reader.llm.base import server_timings
    from reader.llm.local import LocalLLM

    llm = LocalLLM(model_path=model_path, speculative=drafting)
    llm.load()
    out: dict[str, list[dict]] = {}
    try:
        for kind, kind_requests in requests.items():
            for request in kind_requests:
                start = time.perf_counter()
                reply = llm.raw_reply(dict(request))
                wall = time.perf_counter() - start
                t = reply.get("timings") or {}
                # what `reader stats` reads from the same object; no draft figures: nothing drafted
                spent = server_timings(t)
                out.setdefault(kind, []).append(
                    {
                        "text": reply["choices"][0]["message"]["content"] or "",
                        "gen_tokens": t.get("predicted_n", 0),
                        "gen_s": spent["generation_s"] or 0.0,
                        "prompt_s": spent["prompt_s"] or 0.0,
                        "wall_s": wall,
                        "drafted": spent["drafted_tokens"] or 0,
                        "accepted": spent["accepted_tokens"] or 0,
                    }
                )
    finally:
        llm.unload()
    return out


def summary(rows: list[dict]) -> dict:
    gen_tokens = sum(r["gen_tokens"] for r in rows)
    gen_s = sum(r["gen_s"] for r in rows)
    return {
        "gen_tokens": gen_tokens,
        "tok_s": gen_tokens / gen_s if gen_s else 0.0,
        "gen_s": gen_s,
        "wall_s": sum(r["wall_s"] for r in rows),
        "drafted": sum(r["drafted"] for r in rows),
        "accepted": sum(r["accepted"] for r in rows),
    }


HEADER = (
    f"{'kind':<7} {'setting':<22} {'gen tok':>7} {'tok/s':>6} {'gen s':>6} {'wall s':>7} "
    f"{'tok/s ×':>7} {'wall ×':>6} {'drafted':>7} {'accepted':>8}  same text"
)


def report(results: dict[str, dict[str, list[dict]]], names: list[str] | None = None) -> None:
    """One row per kind and setting (those named, else all), its ratios to `off`."""
    base = results["off"]
    print("\n" + HEADER)
    for kind in base:
        b = summary(base[kind])
        for name in names or list(results):
            result = results[name]
            s = summary(result[kind])
            same = sum(r["text"] == o["text"] for r, o in zip(result[kind], base[kind]))
            print(
                f"{kind:<7} {name:<22} {s['gen_tokens']:>7} {s['tok_s']:>6.1f} {s['gen_s']:>6.1f} "
                f"{s['wall_s']:>7.1f} {s['tok_s'] / b['tok_s'] if b['tok_s'] else 0:>7.2f} "
                f"{s['wall_s'] / b['wall_s'] if b['wall_s'] else 0:>6.2f} {s['drafted']:>7} "
                f"{s['accepted']:>8}  {same}/{len(result[kind])}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--settings", default=DEFAULT_SETTINGS, help=f"comma-separated (default {DEFAULT_SETTINGS})"
    )
    parser.add_argument("--paper", type=Path, default=PAPER if PAPER.exists() else FALLBACK_PAPER)
    parser.add_argument("--requests", type=Path, help="keep the captured requests in this JSON file")
    parser.add_argument("--json", type=Path, help="write every reply's figures here")
    parser.add_argument("--kinds", default=",".join(KINDS), help="the prompt kinds to send (default all)")
    parser.add_argument("--draft-model", type=Path, help="a draft model's GGUF, for draft:N:P settings")
    args = parser.parse_args()

    from reader.config import load_settings
    from reader.llm.model_file import ensure_model_file

    if args.requests and args.requests.exists():
        requests = json.loads(args.requests.read_text(encoding="utf-8"))
    else:
        requests = capture(args.paper)
        if args.requests:
            args.requests.write_text(json.dumps(requests, ensure_ascii=False), encoding="utf-8")
    requests = {kind: requests[kind] for kind in args.kinds.split(",")}
    for kind, kind_requests in requests.items():
        print(f"{kind}: {len(kind_requests)} requests of {args.paper.name}")
    model_path = ensure_model_file(load_settings().models_dir)
    settings = [parse_setting(s, args.draft_model) for s in args.settings.split(",")]
    if settings[0].mode != "off":
        settings.insert(0, parse_setting("off"))
    results: dict[str, dict[str, list[dict]]] = {}
    loads = []
    for drafting in settings:
        loads.append(os.getloadavg()[0])
        results[label(drafting)] = run_setting(model_path, drafting, requests)
        print(f"{label(drafting)} done (load average {loads[-1]:.1f} at its start)", flush=True)
        if drafting.mode != "off":  # each setting's rows as soon as it has run
            report(results, [label(drafting)])
    print("\nall settings:")
    report(results)
    print(
        f"\nload average {min(loads):.1f}–{max(loads):.1f} (median {statistics.median(loads):.1f}) on {os.cpu_count()} cores"
    )
    if args.json:
        args.json.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
