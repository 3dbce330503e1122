"""The near-duplicate check (reader.review.records.reviewed_twin) on the shared papers: each paper
ingested and marked reviewed, then checked against the others (a match is a false positive);
then for each paper a copy with other metadata (a re-download: other bytes, the same text) and a
copy without its last page (a shorter version), each ingested, checked (it should match its
original) and removed. No LLM; the hashing embedder. Prints the counts and the check's time.

    .venv/bin/python -m benchmarks.bench_near_duplicates [--home DIR]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from benchmarks.common import SHARED_PAPERS


def variants(paper: Path, folder: Path) -> dict[str, Path]:
    """{"metadata": a copy with another subject, "last page cut": a copy without its last page}."""
    import pymupdf

    made = {
        "metadata": folder / f"{paper.stem}__meta.pdf",
        "last page cut": folder / f"{paper.stem}__cut.pdf",
    }
    with pymupdf.open(paper) as doc:
        kept = {k: v for k, v in doc.metadata.items() if k not in ("format", "encryption")}
        doc.set_metadata({**kept, "subject": "another download"})
        doc.save(made["metadata"])
    with pymupdf.open(paper) as doc:
        if doc.page_count > 1:
            doc.delete_page(doc.page_count - 1)
        doc.save(made["last page cut"])
    return made


def timed_twin(app, paper_id: str, seconds: list[float]) -> dict | None:
    from reader.review.records import reviewed_twin

    with app.services.db() as session:
        started = time.perf_counter()
        twin = reviewed_twin(session, paper_id)
        seconds.append(time.perf_counter() - started)
    return twin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="READER_HOME to use (default: a temporary one)")
    args = parser.parse_args()
    from reader.config import load_settings
    from reader.facade import Reader
    from reader.index.dense import HashingEmbedder
    from reader.store.db import transaction
    from reader.store.tables import Analysis

    work = Path(tempfile.mkdtemp(prefix="near_duplicates_"))
    home = args.home or work / "home"
    app = Reader(load_settings({"READER_HOME": str(home)}), embedder=HashingEmbedder(), use_cache=False)
    papers = sorted(SHARED_PAPERS.glob("*.pdf"))
    ids = {paper: app.ingest([paper])[0].paper_id for paper in papers}
    with transaction(app.services.db) as session:
        for pid in ids.values():
            session.add_all(
                Analysis(paper_id=pid, kind=kind, final_text="-") for kind in ("critique", "synthesis")
            )
    seconds: list[float] = []
    wrong = [paper.name for paper, pid in ids.items() if timed_twin(app, pid, seconds) is not None]
    print(f"originals taken for a version of another: {len(wrong)} of {len(ids)} {wrong or ''}")
    for kind in ("metadata", "last page cut"):
        missed = []
        for paper in papers:
            copy = variants(paper, work)[kind]
            copy_id = app.ingest([copy])[0].paper_id
            if (timed_twin(app, copy_id, seconds) or {}).get("paper_id") != ids[paper]:
                missed.append(paper.name)
            app.remove(copy_id)
        print(
            f"copies ({kind}) found as near-duplicates: {len(papers) - len(missed)} of {len(papers)} {missed or ''}"
        )
    seconds.sort()
    print(
        f"check: median {seconds[len(seconds) // 2] * 1000:.0f} ms, max {seconds[-1] * 1000:.0f} ms "
        f"over {len(seconds)} checks"
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
