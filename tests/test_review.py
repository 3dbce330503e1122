"""`reader review`'s engine (queue the files, then work them off with in-process workers) and
its job table, with injected stages (no PDFs, no LLM)."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import make_reader
from sqlalchemy import delete, func, select

from reader.review import WorkerOptions, WorkerStages, file_sha256, job_rows, run_review
from reader.store.db import transaction
from reader.store.tables import Analysis, AnalysisIteration, LLMCall, Paper, ReviewJob, utcnow
from reader.text.digest import sha256_bytes


@dataclass
class FakeIngestResult:
    paper_id: str | None
    status: str
    error: str = ""
    title: str = ""


class FakeWorld:
    """ingest() stores a Paper for any file not starting with 'BROKEN'; read() stores two analyses."""

    def __init__(self, db, *, read_delay: float = 0.0, fail_on: set[str] = frozenset()):
        self.db = db
        self.read_delay = read_delay
        self.fail_on = set(fail_on)
        self.ingested: list[str] = []
        self.read: list[str] = []
        self.active = 0
        self.max_active = 0
        self.lock = threading.Lock()
        self.label = f"written by world {id(self)}"

    def ingest(self, path: Path) -> FakeIngestResult:
        return self.ingest_data(path.read_bytes(), str(path))

    def ingest_data(self, data: bytes, label: str) -> FakeIngestResult:
        path = Path(label)
        self.ingested.append(path.name)
        if data.startswith(b"BROKEN"):
            return FakeIngestResult(None, "error", f"{path}: not a PDF")
        sha = sha256_bytes(data)
        with transaction(self.db) as s:
            if s.get(Paper, sha) is not None:
                return FakeIngestResult(sha, "unchanged", title=path.stem)
            s.add(Paper(id=sha, title=path.stem, source_path=str(path), source_kind="pdf", pages=1))
        return FakeIngestResult(sha, "ingested", title=path.stem)

    def read_paper(self, paper_id: str, on_progress=None, db=None) -> dict:
        with self.lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            if on_progress:
                on_progress("critique")
            time.sleep(self.read_delay)
            with self.db() as s:
                title = s.get(Paper, paper_id).title
            if title in self.fail_on:
                raise RuntimeError(f"model exploded on {title}")
            self.read.append(title)
            store_review(self.db, paper_id, text=self.label)
            return {}
        finally:
            with self.lock:
                self.active -= 1


def store_review(db, paper_id: str, *, flagged: int = 1, sentences: int = 10, text: str = "x") -> None:
    """Like deep_read: replaces the paper's earlier analyses in the same transaction."""
    with transaction(db) as s:
        s.execute(delete(Analysis).where(Analysis.paper_id == paper_id))
        for kind in ("critique", "synthesis"):
            s.add(LLMCall(stage=kind, role="generator", model="fake", paper_id=paper_id))
            s.add(
                Analysis(
                    paper_id=paper_id,
                    kind=kind,
                    final_text=text,
                    regenerations=1,
                    flagged_ratio=flagged / sentences,
                    iterations=[
                        AnalysisIteration(iteration=0, text="a", n_sentences=sentences, n_flagged=5),
                        AnalysisIteration(iteration=1, text="b", n_sentences=sentences, n_flagged=flagged),
                    ],
                )
            )


def make_files(folder: Path, names: list[str], broken: tuple[str, ...] = ()) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        path = folder / name
        path.write_bytes((b"BROKEN " if name in broken else b"%PDF-fake ") + name.encode())
        paths.append(path)
    return paths


def count(db, table, *where) -> int:
    with db() as s:
        return s.scalar(select(func.count()).select_from(table).where(*where))


def analyses_per_paper(db) -> dict[str, int]:
    with db() as s:
        rows = s.execute(select(Analysis.paper_id, func.count()).group_by(Analysis.paper_id)).all()
    return dict(rows)


def test_reviews_every_paper_and_reports_the_broken_one(db, tmp_path):
    files = make_files(tmp_path / "papers", ["a.pdf", "b.pdf", "bad.pdf", "c.pdf"], broken=("bad.pdf",))
    world = FakeWorld(db)
    report = run_review(files, WorkerStages(db, world.ingest_data, world.read_paper))

    statuses = {Path(p.source).name: p.status for p in report.papers}
    assert statuses == {"a.pdf": "reviewed", "b.pdf": "reviewed", "c.pdf": "reviewed", "bad.pdf": "error"}
    bad = next(p for p in report.papers if p.status == "error")
    assert "not a PDF" in bad.error
    good = next(p for p in report.papers if p.status == "reviewed")
    # figures come from the final iteration of both analyses and the paper's LLM calls
    assert (good.sentences, good.flagged, good.regenerations, good.llm_calls) == (20, 2, 2, 2)
    assert good.final_ratio == pytest.approx(0.1)
    assert sorted(world.read) == ["a", "b", "c"]
    assert count(db, ReviewJob) == 4
    assert {r["status"] for r in job_rows(db)} == {"done", "error"}
    assert set(analyses_per_paper(db).values()) == {2}


def test_rerunning_a_finished_review_does_nothing(db, tmp_path):
    files = make_files(tmp_path, ["a.pdf", "b.pdf"])
    world = FakeWorld(db)
    run_review(files, WorkerStages(db, world.ingest_data, world.read_paper))
    calls_before = count(db, LLMCall)

    again = FakeWorld(db)
    report = run_review(files, WorkerStages(db, again.ingest_data, again.read_paper))
    assert [p.status for p in report.papers] == ["skipped", "skipped"]
    assert again.ingested == [] and again.read == []
    assert count(db, LLMCall) == calls_before
    assert count(db, ReviewJob) == 2 and count(db, Analysis) == 4
    # the skipped rows still show the stored figures
    assert report.papers[0].sentences == 20


def test_force_redoes_one_paper_without_duplicating(db, tmp_path):
    a, b = make_files(tmp_path, ["a.pdf", "b.pdf"])
    world = FakeWorld(db)
    run_review([a, b], WorkerStages(db, world.ingest_data, world.read_paper))

    again = FakeWorld(db)
    report = run_review([a], WorkerStages(db, again.ingest_data, again.read_paper), force=True)
    assert [p.status for p in report.papers] == ["reviewed"]
    assert again.read == ["a"]
    assert count(db, ReviewJob) == 2
    assert analyses_per_paper(db) == {file_sha256(a): 2, file_sha256(b): 2}
    with db() as s:
        texts = set(s.scalars(select(Analysis.final_text).where(Analysis.paper_id == file_sha256(a))))
    assert texts == {again.label}, "the forced paper keeps only its new analyses"

    # b's analyses are the newest rows: SQLite hands their ids to the replacements
    report = run_review([b], WorkerStages(db, again.ingest_data, again.read_paper), force=True)
    assert [p.status for p in report.papers] == ["reviewed"], report.papers[0].error
    assert analyses_per_paper(db) == {file_sha256(a): 2, file_sha256(b): 2}


def test_a_failing_paper_is_reported_and_retried_next_run(db, tmp_path):
    files = make_files(tmp_path, ["a.pdf", "b.pdf", "c.pdf"])
    world = FakeWorld(db, fail_on={"b"})
    report = run_review(files, WorkerStages(db, world.ingest_data, world.read_paper))
    failed = report.failed
    assert [Path(p.source).name for p in failed] == ["b.pdf"]
    assert "model exploded on b" in failed[0].error
    assert analyses_per_paper(db) == {file_sha256(files[0]): 2, file_sha256(files[2]): 2}

    fixed = FakeWorld(db)
    report = run_review(files, WorkerStages(db, fixed.ingest_data, fixed.read_paper))
    assert fixed.read == ["b"]
    assert [p.status for p in report.papers] == ["skipped", "reviewed", "skipped"]
    assert count(db, ReviewJob) == 3


def test_a_job_left_running_by_a_killed_run_is_redone_once(db, tmp_path):
    a, b = make_files(tmp_path, ["a.pdf", "b.pdf"])
    world = FakeWorld(db)
    world.ingest(a)
    world.ingest(b)
    since = utcnow().isoformat()
    with transaction(db) as s:
        # a: killed during the deep read (nothing committed); b: killed after deep_read
        # committed but before the job was marked done
        s.add(
            ReviewJob(
                source_path=str(a),
                paper_id=file_sha256(a),
                status="running",
                stage="read",
                summary={"read_since": since, "pid": 1, "host": "elsewhere"},
            )
        )
        s.add(
            ReviewJob(
                source_path=str(b),
                paper_id=file_sha256(b),
                status="running",
                stage="read",
                summary={"read_since": since, "pid": 1, "host": "elsewhere"},
            )
        )
    store_review(db, file_sha256(b))

    resumed = FakeWorld(db)
    report = run_review([a, b], WorkerStages(db, resumed.ingest_data, resumed.read_paper))
    assert resumed.read == ["a"], "b's committed work is kept, not redone"
    assert [p.status for p in report.papers] == ["reviewed", "reviewed"]
    assert count(db, ReviewJob) == 2
    assert {r["status"] for r in job_rows(db)} == {"done"}
    assert analyses_per_paper(db) == {file_sha256(a): 2, file_sha256(b): 2}


def test_a_paper_reviewed_outside_a_batch_is_skipped(db, tmp_path):
    (a,) = make_files(tmp_path, ["a.pdf"])
    world = FakeWorld(db)
    world.ingest(a)
    store_review(db, file_sha256(a))  # e.g. by `reader read`
    report = run_review([a], WorkerStages(db, world.ingest_data, world.read_paper))
    assert report.papers[0].status == "skipped" and world.read == []
    assert job_rows(db)[0]["status"] == "done"


def test_same_content_under_two_names_is_one_job(db, tmp_path):
    a, b = make_files(tmp_path, ["a.pdf", "b.pdf"])
    b.write_bytes(a.read_bytes())
    world = FakeWorld(db)
    report = run_review([a, b], WorkerStages(db, world.ingest_data, world.read_paper))
    assert [p.status for p in report.papers] == ["reviewed", "skipped"]
    assert "same content as" in report.papers[1].error
    assert count(db, ReviewJob) == 1 and world.read == ["a"]


def test_papers_are_read_concurrently_up_to_the_bound(db, tmp_path):
    files = make_files(tmp_path, [f"p{i}.pdf" for i in range(6)])
    world = FakeWorld(db, read_delay=0.15)
    events = []
    run_review(
        files,
        WorkerStages(db, world.ingest_data, world.read_paper),
        options=WorkerOptions(jobs=3),
        on_event=events.append,
    )
    assert world.max_active == 3
    stages = {(e.index, e.stage) for e in events}
    assert {(i, "ingest") for i in range(1, 7)} <= stages
    assert {(i, "reviewed") for i in range(1, 7)} <= stages
    assert all(e.total == 6 for e in events)
    finished = [e for e in events if e.stage == "reviewed"]
    assert finished[-1].eta_s == 0.0
    assert any(e.detail == "critique" for e in events)


SECTIONS = {
    "Abstract": "We present LexiRank, a ranking method for scientific passages that combines term "
    "statistics with citation context. On the SciPass benchmark LexiRank improves "
    "recall at ten from 61.5% to 70.2% over BM25.",
    "Introduction": "Researchers increasingly rely on search tools to find evidence inside long "
    "papers. Term matching alone misses passages that paraphrase the query. "
    "Citation context offers a cheap signal about what a passage is about. "
    "We study whether this signal helps passage ranking in practice.",
    "Method": "LexiRank scores each passage with BM25 and adds a weighted citation-context score. "
    "The weight is tuned on a held-out split of two hundred queries. "
    "Passages shorter than twenty words are merged with their neighbours before scoring. "
    "The citation context is the sentence that contains the citation marker.",
    "Results": "LexiRank reaches a recall at ten of 70.2% on SciPass while BM25 reaches 61.5%. "
    "The gain is largest for queries that paraphrase the passage wording. "
    "Removing the citation context brings recall back to 62.0%, close to BM25. "
    "Ranking one query takes about four milliseconds on a laptop processor.",
    "Conclusion": "Citation context is a useful and cheap ranking signal for scientific passages. "
    "Future work will test LexiRank on papers written in Chinese.",
}


def test_dry_run_deep_read_end_to_end_then_export(reader_env, monkeypatch, tmp_path):
    """The real deep_read with the dry-run LLM (call log and cache on), a real index, then export."""
    from reader.deepread.read import deep_read
    from reader.export import export_notes
    from reader.facade import Reader
    from reader.index.dense import HashingEmbedder
    from reader.index.store import SearchIndex
    from reader.store.tables import Chunk

    monkeypatch.setenv("READER_LLM_BASE_URL", "scripted:")
    app = Reader()
    db = app.services.db
    index = SearchIndex(app.settings.index_dir, db, embedder=HashingEmbedder())
    path = tmp_path / "lexirank.txt"
    path.write_text("\n\n".join(SECTIONS.values()), encoding="utf-8")

    def ingest_data(data: bytes, label: str) -> FakeIngestResult:
        sha = sha256_bytes(data)
        with transaction(db) as s:
            s.add(
                Paper(
                    id=sha,
                    title="LexiRank: Citation Context for Passage Ranking",
                    abstract=SECTIONS["Abstract"],
                    source_path=label,
                    source_kind="txt",
                    pages=1,
                    chunks=[
                        Chunk(ordinal=i, section=name, page_start=1, page_end=1, text=body)
                        for i, (name, body) in enumerate(SECTIONS.items())
                    ],
                )
            )
        with db() as s:
            index.add_paper(sha, [(c.id, c.text) for c in s.get(Paper, sha).chunks])
        return FakeIngestResult(sha, "ingested", title="LexiRank")

    def read_paper(paper_id, on_progress=None, db=db):
        return deep_read(
            paper_id,
            db=db,
            generator=app.services.generator,
            verifier=app.services.verifier,
            search=lambda q, pid: index.search(q, paper_id=pid),
            on_progress=on_progress,
        )

    events = []
    report = run_review([path], WorkerStages(db, ingest_data, read_paper), on_event=events.append)
    (row,) = report.papers
    assert row.status == "reviewed", row.error
    assert row.sentences > 0 and row.llm_calls >= 4  # two generations and their verify batches
    assert count(db, Analysis) == 2
    assert any("verifying" in e.detail for e in events)
    with db() as s:
        models = set(s.scalars(select(Analysis.generator_model)))
        stages = set(s.scalars(select(LLMCall.stage).where(LLMCall.paper_id == row.paper_id)))
    assert models == {"scripted-dry-run"}
    assert {"critique", "synthesis"} <= stages

    result = export_notes(db, None, tmp_path / "notes")
    note = result.notes[0].read_text(encoding="utf-8")
    assert note.startswith("---\ntitle: 'LexiRank: Citation Context for Passage Ranking'\n")
    assert "## Synthesis" in note and "## Critique" in note
    assert note.count("> [!warning] 待验证") == row.flagged


def test_a_job_held_by_a_live_run_is_left_alone(db, tmp_path):
    import os
    import socket

    (a,) = make_files(tmp_path, ["a.pdf"])
    world = FakeWorld(db)
    world.ingest(a)
    with transaction(db) as s:  # another live process on this machine holds the job
        s.add(
            ReviewJob(
                source_path=str(a),
                paper_id=file_sha256(a),
                status="running",
                stage="read",
                summary={"pid": os.getppid(), "host": socket.gethostname()},
            )
        )
    report = run_review([a], WorkerStages(db, world.ingest_data, world.read_paper))
    assert report.papers[0].status == "busy" and "another run" in report.papers[0].error
    assert world.read == [] and job_rows(db)[0]["status"] == "running"

    with transaction(db) as s:  # the same pid, recycled by a process that started at another time
        job = s.scalars(select(ReviewJob)).one()
        job.summary = {**job.summary, "start": "1"}
    report = run_review([a], WorkerStages(db, world.ingest_data, world.read_paper))
    assert report.papers[0].status == "reviewed" and world.read == ["a"]


def test_review_passes_the_output_language_setting(app, tmp_path):
    """`reader review` and web uploads read papers with READER_OUTPUT_LANGUAGE, as `reader read` does."""
    import dataclasses

    from reader.llm.dryrun import DryRunLLM

    paper = tmp_path / "sparta.md"
    paper.write_text(
        "# SPARTA: sparse retrieval for long documents\n\n## Introduction\n\n"
        "We introduce SPARTA, a sparse retriever for long scientific documents. "
        "On the LongDocs benchmark SPARTA reaches a recall of 81.2% at ten passages. "
        "The model is trained on two million query and passage pairs drawn from PubMed.\n",
        encoding="utf-8",
    )
    llm = DryRunLLM()
    reader = make_reader(settings=dataclasses.replace(app.settings, output_language="zh"), llm=llm)
    report = reader.review([paper], jobs=1)
    assert report.papers[0].status == "reviewed"
    writing = [call["prompt"] for call in llm.history if call["stage"] in ("critique", "synthesis")]
    assert writing and all("Write in Chinese (简体中文)." in prompt for prompt in writing)


# ---------------------------------------------------------------- the database file deleted mid-run


def _delete_sqlite_file(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def test_a_write_to_a_deleted_database_file_fails_in_one_line_and_creates_no_empty_one(tmp_path):
    from reader.errors import DatabaseUnusable
    from reader.store.db import open_database

    path = tmp_path / "home" / "reader.db"
    db = open_database(f"sqlite:///{path}")
    with transaction(db) as s:
        s.add(Paper(id="a" * 64, title="kept", source_path="a.pdf", source_kind="pdf", pages=1))
    _delete_sqlite_file(path)
    with pytest.raises(DatabaseUnusable) as gone:
        with transaction(db) as s:
            s.add(Paper(id="b" * 64, title="lost", source_path="b.pdf", source_kind="pdf", pages=1))
    message = str(gone.value)
    assert str(path) in message and "deleted or replaced" in message and "\n" not in message
    assert not path.exists()  # a later connection does not make an empty database in its place

    # writers at once: each refused at once, none left waiting on a lock the refused one kept
    def write(n: int) -> None:
        for i in range(3):
            with pytest.raises(DatabaseUnusable):
                with transaction(db) as s:
                    s.add(Paper(id=f"{n}{i}" * 32, title="lost", source_path="x", source_kind="pdf", pages=1))

    began = time.monotonic()
    writers = [threading.Thread(target=write, args=(n,)) for n in range(3)]
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join()
    assert time.monotonic() - began < 5  # SQLite's busy timeout is 30 s

    # replaced by another file (a restore behind the run's back): refused as well
    other = tmp_path / "other.db"
    open_database(f"sqlite:///{other}").kw["bind"].dispose()
    other.rename(path)
    with pytest.raises(DatabaseUnusable):
        with transaction(db) as s:
            s.add(Paper(id="c" * 64, title="lost", source_path="c.pdf", source_kind="pdf", pages=1))


def test_deleting_the_database_during_a_review_fails_the_papers_it_could_not_store(tmp_path):
    """reader.db deleted once the first paper is reviewed: that one stays reviewed; each later
    one is a failed paper naming the file, none is reported reviewed."""
    from test_queue import write_papers

    from reader.llm.dryrun import DryRunLLM

    path = tmp_path / "home" / "reader.db"
    app = make_reader(tmp_path / "home", env=os.environ, database_url=f"sqlite:///{path}", llm=DryRunLLM())
    files = write_papers(tmp_path / "inbox", 4)

    def on_event(event):
        if event.stage == "reviewed" and path.exists():
            _delete_sqlite_file(path)

    report = app.review(files, jobs=1, on_event=on_event)
    statuses = [row.status for row in report.papers]
    assert statuses == ["reviewed", "error", "error", "error"], report.to_json()
    for row in report.papers[1:]:
        assert str(path) in row.error and "deleted or replaced" in row.error, row.error
        assert "\n" not in row.error
    assert not path.exists()
