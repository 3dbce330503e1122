"""Speed of the embedded model on this machine: load time, prompt and generation
tokens per second (llama.cpp's own timings), a verification call end to end,
and resident memory. A 1-thread run in the same process is the baseline for
the thread ratio.

    .venv/bin/python -m benchmarks.bench_local_llm [--threads 2] [--no-baseline]

The prompt text is the start of a real paper from ../shared/papers.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT.parent / "shared" / "papers" / "acl2014_P14-1059.pdf"


def paper_text(chars: int) -> str:
    import pymupdf

    with pymupdf.open(PAPER) as doc:
        text = " ".join(page.get_text() for page in doc)
    return " ".join(text.split())[:chars]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(llm, text: str, *, gen_tokens: int, repeats: int) -> dict:
    prompt_rates, gen_rates, prompt_ns = [], [], []
    for i in range(repeats):
        # A different first line each time, so no prompt prefix is reused from the last call.
        messages = [{"role": "user", "content": f"Run {i}. Summarize this paper excerpt.\n\n{text}"}]
        reply = llm.raw_reply(
            {"messages": messages, "max_tokens": gen_tokens, "temperature": 0.0, "cache_prompt": False}
        )
        t = reply["timings"]
        prompt_rates.append(t["prompt_per_second"])
        gen_rates.append(t["predicted_per_second"])
        prompt_ns.append(t["prompt_n"])
    return {
        "prompt_tokens": int(statistics.median(prompt_ns)),
        "prompt_tok_s": statistics.median(prompt_rates),
        "gen_tok_s": statistics.median(gen_rates),
    }


def verify_call(llm) -> tuple[float, str]:
    from reader.llm.base import user

    evidence = paper_text(1600)
    claims = [
        "The paper evaluates on a public dataset.",
        "The method uses 64 TPUs.",
        "The paper reports results in a table.",
        "The authors release no code.",
    ]
    numbered = "\n".join(f"[{i}] {c}" for i, c in enumerate(claims, 1))
    prompt = (
        f"Evidence:\n{evidence}\n\nClaims:\n{numbered}\n\nAnswer one line per claim: "
        "[n] YES if the evidence supports the claim, [n] NO if not. No explanations."
    )
    start = time.perf_counter()
    out = llm.complete(user(prompt), max_tokens=24)
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-baseline", action="store_true", help="skip the 1-thread baseline")
    args = parser.parse_args()

    import os

    from reader.config import load_settings
    from reader.llm.local import LocalLLM
    from reader.llm.model_file import ensure_model_file

    print(
        f"load average      {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
        f"on {os.cpu_count()} cores (other processes slow every figure below)"
    )
    settings = load_settings()
    start = time.perf_counter()
    path = ensure_model_file(settings.models_dir)
    print(f"model file        {path} (ready in {time.perf_counter() - start:.1f} s)")
    rss_before = rss_mb()

    llm = LocalLLM(model_path=path, n_threads=args.threads)
    load_s = llm.load()
    print(f"load time         {load_s:.2f} s  ({args.threads} threads)")
    text = paper_text(2400)
    main_run = measure(llm, text, gen_tokens=96, repeats=args.repeats)
    print(
        f"prompt            {main_run['prompt_tok_s']:.1f} tokens/s  "
        f"(median of {args.repeats}, {main_run['prompt_tokens']}-token prompt)"
    )
    print(f"generation        {main_run['gen_tok_s']:.1f} tokens/s  (96 tokens)")
    seconds, out = verify_call(llm)
    print(
        f"verify call       {seconds:.2f} s for 4 claims + evidence "
        f"({out.prompt_tokens} prompt, {out.completion_tokens} generated tokens): "
        f"{out.text.replace(chr(10), ' | ')}"
    )
    print(f"load average      {os.getloadavg()[0]:.1f} at the end")
    print(f"resident memory   {rss_mb():.0f} MB (process; {rss_mb() - rss_before:.0f} MB for the model)")

    if not args.no_baseline and args.threads != 1:
        base = LocalLLM(model_path=path, n_threads=1)
        base.load()
        one = measure(base, text, gen_tokens=48, repeats=max(1, args.repeats - 1))
        print(
            f"baseline 1 thread prompt {one['prompt_tok_s']:.1f} tok/s, "
            f"generation {one['gen_tok_s']:.1f} tok/s"
        )
        print(
            f"ratio {args.threads} threads / 1 thread: prompt "
            f"{main_run['prompt_tok_s'] / one['prompt_tok_s']:.2f}x, generation "
            f"{main_run['gen_tok_s'] / one['gen_tok_s']:.2f}x"
        )


if __name__ == "__main__":
    main()
