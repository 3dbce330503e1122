"""Which of llama.cpp's sampling controls help the embedded 1.5B writer: each setting writes the
synthesis and the critique of the same papers (reader.deepread.writer, one heading at a time, no audit), and
the documents are measured as benchmarks.notes_quality measures notes.

    .venv/bin/python -m benchmarks.bench_sampling --papers acl2014_P14-1059.pdf naacl2013_roark13.pdf

Papers from ../shared/papers (ingested into a throwaway database); embedded model, no cache.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from benchmarks.common import SHARED_PAPERS
from benchmarks.notes_quality import load_paper, measure_document, summary_of_documents

SETTINGS = {
    "none (temperature 0.2)": {},
    "repeat 1.1 + DRY 0.8 + min-p 0.05": {"repeat_penalty": 1.1, "dry_multiplier": 0.8, "min_p": 0.05},
    "frequency 0.5 + presence 0.3": {"frequency_penalty": 0.5, "presence_penalty": 0.3},
}


def main() -> None:
    from reader.config import load_settings
    from reader.deepread.context import build_context, load_material
    from reader.deepread.writer import Request, headings, write_document
    from reader.ingest.pipeline import ingest_file
    from reader.llm.base import SMALL_LOCAL
    from reader.llm.local import LocalLLM
    from reader.store.db import open_database

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", nargs="+", default=["acl2014_P14-1059.pdf", "naacl2013_roark13.pdf"])
    parser.add_argument("--kinds", nargs="+", default=["synthesis", "critique"])
    args = parser.parse_args()
    llm = LocalLLM(load_settings().models_dir)
    llm.load()
    results = {name: [] for name in SETTINGS}
    with tempfile.TemporaryDirectory() as tmp:
        db = open_database(f"sqlite:///{tmp}/bench.db")
        for paper_name in args.papers:
            path = SHARED_PAPERS / paper_name
            paper = load_paper(path, tmp)
            result = ingest_file(path, db)
            with db() as session:
                material = load_material(session, result.paper_id)
            context = build_context(material, SMALL_LOCAL.context_tokens)
            for kind in args.kinds:
                for name, sampling in SETTINGS.items():
                    request = Request(
                        kind=kind,
                        title=material.title,
                        language=material.language,
                        context=context.text,
                        left_out=context.left_out[:12],
                        sections=material.sections,
                        paper_id=material.paper_id,
                        words_per_heading=SMALL_LOCAL.target_words // len(headings(kind)),
                        sampling=sampling,
                    )
                    start = time.perf_counter()
                    draft = write_document(llm, request)
                    measured = measure_document(draft.text, paper)
                    measured["seconds"] = time.perf_counter() - start
                    results[name].append(measured)
                    print(
                        f"{paper_name[:36]:36} {kind:9} {name:36} {measured['words']:4} words · "
                        f"{measured['distinct']}/{measured['sentences']} distinct · "
                        f"{measured['specific']} specific · {measured['copies']} copies · "
                        f"{measured['seconds']:.0f} s",
                        flush=True,
                    )
    print()
    for name, documents in results.items():
        print(f"{name}:")
        for key, value in summary_of_documents(documents).items():
            print(f"  {key:34} {value}")


if __name__ == "__main__":
    main()
