"""The one entry point: the CLI, the web page and Python code all go through a Reader.

    from reader import Reader

    reader = Reader(home="~/reader-home")       # or Reader(settings), Reader(llm=my_client)
    reader.ingest(["papers/"])
    result = reader.read("sample")               # critique and synthesis, every sentence audited
    reader.paper("sample").judge("critique-2", "supported")
    print(result.to_json())

A Reader is a thin, stable surface over the composition root (reader.services.Services),
which builds what the stages need once, on first use. The everyday calls are its methods;
the rest belongs to the objects it hands out: one stored paper (`reader.paper(ref)`,
reader/facade/paper.py), the library as a whole (`reader.library`), the review queue
(`reader.queue`), questions (`reader.questions`) and the accounts of a shared web server
(`reader.accounts`). Every call returns a dataclass whose to_json() is what the matching
command prints with --json.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from reader.config import Settings, load_settings
from reader.errors import ReaderError
from reader.facade.accounts import Accounts
from reader.facade.library import Library, as_list
from reader.facade.paper import Paper
from reader.facade.questions import Questions
from reader.facade.review_queue import ReviewQueue
from reader.services import Services

Notice = Callable[[str], None]


class Reader:
    def __init__(
        self,
        settings: Settings | None = None,
        *,
        home: str | Path | None = None,
        database_url: str | None = None,
        llm=None,
        verifier=None,
        embedder=None,
        checker=None,
        grader=None,
        use_cache: bool | None = None,
        on_notice: Notice | None = None,
    ):
        """Settings come from the environment and the config file unless given.

        `home` and `database_url` override them. `llm` is any object with a `model`
        name and `complete(messages, ...)` (reader.llm.base.LLM): it writes, and also
        checks unless a separate `verifier` is given; calls to either are logged and
        cached like the built-in ones. `embedder` replaces the packaged embedding model;
        `checker` (anything with `score(claims, evidence_lists)`, reader.audit.checking) the
        shipped claim checker, used when READER_CHECKER is on; `grader` (anything with
        `grade(question, passages)`, reader.grader.model) the shipped relevance grader, used when
        READER_CRAG_GRADER is on.
        `on_notice` receives warnings that do not stop the work (default: logging).
        """
        if settings is None:
            env = dict(os.environ)
            if home is not None:
                env["READER_HOME"] = str(home)
            settings = load_settings(env)
        elif home is not None:
            home = Path(home).expanduser()
            settings = dataclasses.replace(settings, home=home)
        if database_url is not None:
            settings = dataclasses.replace(settings, database_url=database_url)
        self.services = Services(
            settings,
            llm=llm,
            verifier=verifier,
            embedder=embedder,
            checker=checker,
            grader=grader,
            use_cache=use_cache,
            on_notice=on_notice,
        )
        self.library = Library(self.services)
        self.queue = ReviewQueue(self.services)
        self.questions = Questions(self.services)
        self.accounts = Accounts(self.services)

    @property
    def settings(self) -> Settings:
        """The settings every part works with (those of the composition root)."""
        return self.services.settings

    # ------------------------------------------------------------ the library

    def ingest(self, paths: Iterable[str | Path], *, on_result=None, before_file=None):
        """Parse files and folders into the library -> list[IngestResult] (one per file).

        on_result(result, done, total) after each file; before_file(path, n_files) before each."""
        return self.services.ingest_paths(
            [str(p) for p in as_list(paths)], on_result=on_result, before_file=before_file
        )

    def papers(self):
        """Every stored paper, newest first -> list[PaperInfo]."""
        from reader.store.queries import list_papers

        with self.services.db() as session:
            return list_papers(session)

    def paper(self, ref: str) -> Paper:
        """One stored paper from an id, id prefix, file path or title prefix -> Paper (its `info`,
        analyses, judgements, highlights, note, citations; reader/facade/paper.py)."""
        return Paper(self.services, self.library.paper_id(ref))

    def remove(self, paper: str):
        """Delete a paper and everything derived from it, its page images and uploaded copy
        included -> PaperInfo of what was removed."""
        return self.paper(paper).remove()

    def search(self, query: str, paper: str | None = None, k: int = 3):
        """Passages that best match `query` (BM25 and dense, fused) -> SearchResults."""
        from reader.index.hits import SearchResults

        if not query.strip():
            raise ReaderError("search: the query is empty; give the words or sentence to look for")
        paper_id = self.library.paper_id(paper) if paper else None
        index = self.services.search_index
        hits = index.search(query, paper_id=paper_id, top_k_per_path=k)
        return SearchResults(query, hits, len(index))

    # ------------------------------------------------------------ reading and auditing

    def read(
        self,
        paper: str | Path,
        *,
        on_progress: Notice | None = None,
        context_tokens: int | None = None,
        words: int | None = None,
        followup: bool | None = None,
    ):
        """Write and audit a paper's critique and synthesis, and store them -> DeepReadResult.

        `paper` is a file (ingested first when new) or a stored paper's id, id prefix or title prefix.
        When the audit passes, READER_FOLLOWUP follow-up questions are asked of the paper and
        stored with the review (`result.followups`); `followup=False` skips them for this read."""
        return self.services.read_paper(
            self._ingested_id(paper, on_progress),
            on_progress=on_progress,
            context_tokens=context_tokens,
            words=words,
            followup=followup,
        )

    def _ingested_id(self, paper: str | Path, on_progress: Notice | None = None) -> str:
        path = Path(paper).expanduser()
        if not path.is_file():
            return self.library.paper_id(str(paper))
        if on_progress:
            on_progress(f"ingest: {path}")
        result = self.services.ingest_file(path)
        if result.status == "error":
            raise ReaderError(f"{path}: {result.error}")
        return result.paper_id

    def audit(self, text: str, paper: str):
        """Check any text sentence by sentence against a paper -> AuditReport."""
        if not text.strip():
            raise ReaderError("the text to audit is empty: pass --text-file FILE or pipe the text in")
        return self.services.audit_text(text, self.library.paper_id(paper))

    def ask(
        self,
        question: str,
        paper: str | None = None,
        *,
        threshold: float | None = None,
        max_corrections: int | None = None,
        external=None,
        store: bool = True,
        on_stage: Notice | None = None,
    ):
        """Answer a question with Corrective RAG over one paper or the library -> AskResult
        (stored unless `store` is False; the options as Questions.ask has them)."""
        return self.questions.ask(
            question,
            paper,
            threshold=threshold,
            max_corrections=max_corrections,
            external=external,
            store=store,
            on_stage=on_stage,
        )

    # ------------------------------------------------------------ collections

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
        """Ingest, read and audit every paper under `paths`, resumably -> ReviewReport (see
        ReviewQueue.review): `jobs` workers in this process, papers reviewed before skipped
        unless `force`."""
        return self.queue.review(paths, jobs, force, on_event=on_event, stop=stop, zotero=zotero)

    def export(self, out: str | Path, papers: Iterable[str] | None = None, *, lookup: str | None = None):
        """Write one annotated Markdown note per reviewed paper, plus index.md -> ExportResult
        (see Library.export)."""
        return self.library.export(out, papers, lookup=lookup)

    def stats(self, paper: str | None = None):
        """LLM calls, cache hits, errors, tokens and time per stage, model and paper -> UsageReport."""
        from reader.store.usage import usage_report

        return usage_report(self.services.db, paper)
