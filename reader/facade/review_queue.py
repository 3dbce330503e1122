"""The review queue: `reader.queue` (docs/guide/scale.md). Files go into the database's queue and
workers on any machine sharing it review them; `review` does both in this process.

    reader.queue.enqueue(["papers/"])
    report = reader.queue.work(until_empty=True)
    reader.queue.jobs().counts()
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable
from pathlib import Path

from reader.facade.library import as_list, no_sources_error
from reader.services import Services


class ReviewQueue:
    def __init__(self, services: Services):
        self._services = services

    def review(
        self,
        paths: Iterable[str | Path],
        jobs: int = 2,
        force: bool = False,
        *,
        on_event=None,
        stop: threading.Event | None = None,
        zotero=None,
    ):
        """Ingest, read and audit every paper under `paths`, resumably -> ReviewReport.

        The files are queued (as `enqueue` does) and reviewed by `jobs` workers in this
        process, the engine of `work`, until none of them is left. Papers already reviewed are
        skipped unless `force`; a failing paper is reported in its row and never stops the
        others. `zotero` (a ZoteroLibrary from `Library.zotero_library`) reviews its items
        instead, each stored with its Zotero metadata."""
        from reader.ingest.pipeline import find_sources
        from reader.review import PaperReview

        if zotero is not None:
            return self._review_zotero(zotero, jobs, force, on_event=on_event, stop=stop)
        paths = as_list(paths)
        sources, missing = find_sources([str(p) for p in paths])
        if not sources and not missing:
            raise no_sources_error(paths)
        report = self._review_sources(sources, self._services.ingest_data, jobs, force, on_event, stop)
        for item in missing:
            report.papers.append(
                PaperReview(source=str(item.file), status="error", error=item.error or "cannot read it")
            )
        return report

    def _review_zotero(self, library, jobs: int, force: bool, *, on_event=None, stop=None):
        from reader.ingest.pipeline import apply_zotero, apply_zotero_to_stored
        from reader.text.paths import stored_path

        db = self._services.db
        by_label = {stored_path(item.pdf): item for item in library.items}  # as queued
        done, notes = apply_zotero_to_stored(db, library.items)
        notes = library.lines() + notes

        def ingest_data(data: bytes, label: str):
            result = self._services.ingest_data(data, label)
            item = by_label.get(label)
            fresh = result.status != "error" and result.paper_id and result.paper_id not in done
            if item is not None and fresh:
                note = apply_zotero(db, result.paper_id, item)
                if note:
                    notes.append(note)
            return result

        report = self._review_sources(
            [item.pdf for item in library.items], ingest_data, jobs, force, on_event, stop
        )
        report.notes = notes
        return report

    def _review_sources(self, sources: list[Path], ingest_data, jobs: int, force: bool, on_event, stop):
        """Queue the files, then review them with `jobs` workers in this process (the engine of
        `reader worker`, reader.review.run)."""
        from reader.review import run_review

        return run_review(
            sources,
            self._services.worker_stages(ingest_data),
            self._services.worker_options(jobs=jobs),
            read_limits=self._services.ingest_limits,
            force=force,
            on_event=on_event,
            stop=stop,
        )

    def enqueue(self, paths: Iterable[str | Path], force: bool = False, fresh: bool = False):
        """Put the papers under `paths` on the queue for `reader worker` and return at once ->
        EnqueueReport. The files' bytes go into the database, so a worker on any machine
        reads them; each file is queued once (by content). `fresh`: read without the LLM cache."""
        from reader.ingest.pipeline import find_sources
        from reader.review import EnqueueRow, enqueue_sources

        paths = as_list(paths)
        sources, missing = find_sources([str(p) for p in paths])
        if not sources and not missing:
            raise no_sources_error(paths)
        report = enqueue_sources(
            self._services.db, sources, force=force, limits=self._services.ingest_limits, fresh=fresh
        )
        report.rows += [EnqueueRow(str(m.file), None, "error", m.error or "cannot read it") for m in missing]
        return report

    def work(
        self,
        *,
        jobs: int = 1,
        once: bool = False,
        until_empty: bool = False,
        poll_s: float = 2.0,
        stop: threading.Event | None = None,
        abandon: threading.Event | None = None,
        on_event=None,
    ):
        """Review queued papers until stopped -> WorkerReport (see reader.review.worker.run_worker):
        `jobs` at a time, one with `once`, until none is queued or running with `until_empty`."""
        from reader.review import run_worker

        options = self._services.worker_options(jobs=jobs, once=once, until_empty=until_empty, poll_s=poll_s)
        return run_worker(
            self._services.worker_stages(), options, stop=stop, abandon=abandon, on_event=on_event
        )

    def jobs(self, *, queued_only: bool = False):
        """Every review job: queued / running (which worker, since when) / done / failed -> JobsReport."""
        from reader.queue import job_status

        return JobsReport(job_status(self._services.db, queued_only=queued_only))


@dataclasses.dataclass
class JobsReport:
    """`reader jobs`: every job's row (reader.queue.JobRow) and the count per status."""

    rows: list

    def counts(self) -> dict[str, int]:
        counts = {name: 0 for name in ("queued", "running", "stale", "done", "failed")}
        for row in self.rows:
            counts[row.status] = counts.get(row.status, 0) + 1
        return counts

    def to_json(self) -> dict:
        return {"jobs": [r.to_json() for r in self.rows], "counts": self.counts()}
