"""The one entry point: the CLI, the web page and Python code all go through a Reader.

    from reader import Reader

    reader = Reader(home="~/reader-home")       # or Reader(settings), Reader(llm=my_client)
    reader.ingest(["papers/"])
    result = reader.read("sample")               # critique and synthesis, every sentence audited
    print(result.to_json())

A Reader builds what the stages need once, on first use: the database, the
search index, and the two LLM roles (the generator writes, the verifier checks)
wrapped with the call log and response cache. Stages get these passed in; this
is the only module that wires them. Every method returns a dataclass whose
to_json() is what the matching command prints with --json.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from reader.config import Settings, load_settings
from reader.errors import ConfigError, PaperNotFound, ReaderError
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
        self.settings = settings
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
        self.use_cache = self.services.use_cache
        self.notice: Notice = self.services.notice

    # ------------------------------------------------------------ the library

    def ingest(self, paths: Iterable[str | Path], *, on_result=None, before_file=None):
        """Parse files and folders into the library -> list[IngestResult] (one per file).

        on_result(result, done, total) after each file; before_file(path, n_files) before each."""
        from reader.ingest.pipeline import ingest_paths

        return ingest_paths(
            [str(p) for p in _as_list(paths)],
            self.services.db,
            open_index=self.services.index_or_none,
            on_progress=on_result,
            before_file=before_file,
            limits=self._ingest_limits(),
        )

    def zotero_library(self, data_dir: str | Path | None = None, collection: str | None = None):
        """Zotero's items with a PDF (from a copy of its database) -> ZoteroLibrary;
        `data_dir` defaults to the usual Zotero data directory (~/Zotero)."""
        from reader.ingest.zotero import default_data_dir, read_library

        return read_library(Path(data_dir) if data_dir else default_data_dir(), collection)

    def ingest_zotero(
        self,
        data_dir: str | Path | None = None,
        collection: str | None = None,
        *,
        on_result=None,
        on_note: Notice | None = None,
    ):
        """Ingest a Zotero library (or one collection) with each item's metadata -> list[IngestResult];
        items without a usable PDF come back "skipped" with the reason."""
        from reader.ingest.pipeline import ingest_zotero

        return ingest_zotero(
            self.zotero_library(data_dir, collection),
            self.services.db,
            open_index=self.services.index_or_none,
            on_progress=on_result,
            on_note=on_note or self.notice,
            limits=self._ingest_limits(),
        )

    def import_papers(
        self, items: Iterable[str], *, services: str | None = None, base_urls: dict | None = None
    ):
        """Bring papers in by DOI, arXiv id or URL, or from RIS/BibTeX files -> ImportReport (one row
        per paper). `services` ("arxiv,openalex,unpaywall,crossref"; "off"; None: READER_IMPORT_SERVICES,
        off by default) may be asked for the metadata and the open-access PDF; an entry with a local
        PDF, or with a title when nothing may be asked, is imported without them. `base_urls`
        (service -> address) points the services elsewhere (tests: a loopback server)."""
        from reader.config.settings import parse_import_services
        from reader.ingest.fetch import Fetcher
        from reader.ingest.identifiers import records_for
        from reader.ingest.importing import import_records

        names = self.settings.import_services if services is None else services
        chosen = parse_import_services(
            "--services" if services is not None else "READER_IMPORT_SERVICES", names
        )
        records = [record for item in _as_list(items) for record in records_for(str(item))]
        fetcher = (
            Fetcher(chosen.split(","), self.settings.openalex_mailto, base_urls or {}) if chosen else None
        )
        return import_records(
            records,
            self.services.db,
            self.services.index_or_none(),
            fetcher,
            self._ingest_limits(),
            keep_dir=self.settings.home / "uploads",
        )

    def papers(self):
        """Every stored paper, newest first -> list[PaperInfo]."""
        from reader.store.queries import list_papers

        with self.services.db() as session:
            return list_papers(session)

    def paper(self, ref: str):
        """One stored paper from an id, id prefix, file path or title prefix -> PaperInfo."""
        from reader.store.queries import list_papers, resolve_paper

        with self.services.db() as session:
            return list_papers(session, resolve_paper(session, str(ref)).id)[0]

    def _paper_id(self, ref: str) -> str:
        from reader.store.queries import resolve_paper_id

        return resolve_paper_id(self.services.db, str(ref))

    def remove(self, paper: str):
        """Delete a paper and everything derived from it -> PaperInfo of what was removed."""
        from reader.ingest.pipeline import remove_paper

        info = self.paper(paper)
        index = self.services.index_or_none()
        remove_paper(self.services.db, info.id)
        if index is not None:
            try:
                index.remove_paper(info.id)
            except Exception as exc:  # the database is the source of truth; the index catches up
                self.notice(f"search index not updated ({exc}); it drops the paper on next use")
        return info

    def search(self, query: str, paper: str | None = None, k: int = 3):
        """Passages that best match `query` (BM25 and dense, fused) -> SearchResults."""
        from reader.index.hits import SearchResults

        if not query.strip():
            raise ReaderError("search: the query is empty; give the words or sentence to look for")
        paper_id = self._paper_id(paper) if paper else None
        index = self.services.search_index
        hits = index.search(query, paper_id=paper_id, top_k_per_path=k)
        return SearchResults(query, hits, len(index))

    def cites(self, paper: str):
        """The paper's reference entries, each with the library paper it cites where the library
        holds it (matched by DOI, else by title) -> CitationList (reader.ingest.links)."""
        return self._citations(paper, "cites")

    def cited_by(self, paper: str, *, external=None):
        """The library's reference entries that cite the paper -> CitationList; with external
        search on (READER_EXTERNAL_SEARCH or `external`, as for `ask`), also the works that
        Semantic Scholar and OpenAlex know to cite it (by its DOI)."""
        found = self._citations(paper, "cited_by")
        with self.services.db() as session:
            from reader.store.tables import Paper

            doi = session.get(Paper, found.paper_id).doi
        for adapter in self.external_searches(external):
            if not hasattr(adapter, "citing"):
                continue
            if not doi:
                found.notes.append(f"{adapter.name}: not asked, the paper has no DOI")
                continue
            try:
                hits = adapter.citing(doi)
            except ReaderError as exc:
                found.notes.append(f"external search failed: {exc}")
                continue
            found.external += [
                {"source": h.source, "title": h.title, "year": h.year, "url": h.url} for h in hits
            ]
        return found

    def _citations(self, paper: str, direction: str):
        from reader.ingest import links
        from reader.store.db import transaction
        from reader.store.queries import resolve_paper

        with transaction(self.services.db) as session:
            links.ensure_linked(session)
            found = resolve_paper(session, str(paper))
            entries = (
                links.cites(session, found.id) if direction == "cites" else links.cited_by(session, found.id)
            )
            return links.CitationList(found.id, found.title or "", direction, entries)

    def reindex(self) -> int:
        """Rebuild the search index from the passages in the database; returns their number."""
        return self.services.search_index.rebuild()

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

    def followups(self, paper: str) -> list:
        """The follow-up questions of a paper's review, answered -> list[FollowUpItem]."""
        from reader.store.queries import followups_of

        with self.services.db() as session:
            return followups_of(session, self._paper_id(paper))

    def _ingested_id(self, paper: str | Path, on_progress: Notice | None = None) -> str:
        path = Path(paper).expanduser()
        if not path.is_file():
            return self._paper_id(str(paper))
        from reader.ingest.pipeline import ingest_file

        if on_progress:
            on_progress(f"ingest: {path}")
        result = ingest_file(path, self.services.db, self.services.search_index, limits=self._ingest_limits())
        if result.status == "error":
            raise ReaderError(f"{path}: {result.error}")
        return result.paper_id

    def analyses(self, paper: str):
        """A paper's stored critique and synthesis with their verdicts, how each was decided, and its
        rigour checklist (stored by the read, else by the rules alone) -> StoredAnalyses."""
        from reader.audit.highlights import with_highlights
        from reader.audit.judgements import with_judgements
        from reader.audit.record import stored_analyses
        from reader.checklist import checklist_of
        from reader.store.queries import resolve_paper

        with self.services.db() as session:
            stored = stored_analyses(session, resolve_paper(session, str(paper)))
            with_judgements(session, stored)
            with_highlights(session, stored)
            checklist = checklist_of(session, stored.paper_id)
            stored.checklist = checklist.to_json() if checklist is not None else None
            return stored

    def highlight(self, paper: str, page: int, rects: list, text: str, note: str = ""):
        """Keep the reader's own highlight of text on one page of a paper's PDF -> HighlightItem.

        `rects`: where the text stands on the page, [[x0, y0, x1, y1], ...] as fractions of the
        page's width and height; `note` (at most 2,000 characters) is optional."""
        from reader.audit.highlights import add_highlight
        from reader.store.db import transaction
        from reader.store.queries import resolve_paper

        with transaction(self.services.db) as session:
            return add_highlight(session, resolve_paper(session, str(paper)), page, rects, text, note)

    def delete_highlight(self, paper: str, highlight_id: int) -> bool:
        """Remove one of a paper's highlights; False when it has none by that id."""
        from reader.audit.highlights import delete_highlight
        from reader.store.db import transaction
        from reader.store.queries import resolve_paper

        with transaction(self.services.db) as session:
            return delete_highlight(session, resolve_paper(session, str(paper)).id, highlight_id)

    def judge(
        self,
        paper: str,
        sentence: str,
        verdict: str | None,
        *,
        comment: str = "",
        by: str = "",
        expected: str | None = None,
        seen: str | None = None,
    ):
        """Keep the reader's own verdict of one sentence of a paper's review -> JudgementResult.

        `sentence` is its id, `critique-3` or `synthesis-1` (as `reader show --verdicts` numbers
        them); `verdict` "supported" (overrules a [待验证] flag) or "unsupported" (confirms one,
        or flags a sentence the audit passed), None to withdraw it; `comment` and `by` (a name)
        are optional. `expected` (the sentence's key, reader.audit.judgements.sentence_key) makes
        it refuse when the sentence there is another one now; `seen` (judgement_state, what the
        page showed) makes it refuse with Conflict when the judgement changed meanwhile. Without
        `seen`, judgements of one sentence at once are kept one after the other: the last stays."""
        from sqlalchemy.exc import IntegrityError

        from reader.audit.judgements import JUDGEMENT_LOCK, JudgementResult, changed_meanwhile, judge
        from reader.errors import Conflict
        from reader.store.db import transaction
        from reader.store.queries import resolve_paper

        try:
            with transaction(self.services.db, lock=JUDGEMENT_LOCK) as session:
                found = resolve_paper(session, str(paper))
                audited, judgement, withdrawn = judge(
                    session,
                    found.id,
                    sentence,
                    verdict,
                    comment=comment,
                    judged_by=by,
                    expected_key=expected,
                    seen=seen,
                )
                return JudgementResult(
                    paper_id=found.id,
                    title=found.title,
                    sentence_id=sentence.strip().lower(),
                    sentence=audited.text,
                    audit_verdict=audited.verdict,
                    judgement=judgement,
                    withdrawn=withdrawn,
                )
        except IntegrityError:  # a writer that did not take the lock (an older version) came first
            raise Conflict(changed_meanwhile(sentence)) from None

    def audit(self, text: str, paper: str):
        """Check any text sentence by sentence against a paper -> AuditReport."""
        if not text.strip():
            raise ReaderError("the text to audit is empty: pass --text-file FILE or pipe the text in")
        return self.services.audit_text(text, self._paper_id(paper))

    def extraction_table(self, papers: Iterable[str], *, stored_only: bool = False, columns=(), questions=()):
        """The extraction table of the chosen papers (ids, id prefixes or title prefixes) ->
        ExtractionTable: for each its task, datasets and sizes, method, baselines and headline
        result, from the stored synthesis and the paper's passages, each cell with its source
        passage and page and audited like any sentence ([待验证] without support); `to_csv()`.
        `stored_only`: only from answers the verifier gave before (the web page's GET), with no
        model call; reader.errors.NotStored when the table was not built yet. `columns`: items of
        the rigour checklist to add (metrics, variance, code …); `questions`: columns of the user's
        own, each a question asked of every paper and answered with its sources, audited."""
        paper_ids = [self._paper_id(ref) for ref in _as_list(papers)]
        return self.services.extraction_table(
            paper_ids, stored_only=stored_only, columns=_as_list(columns), questions=_as_list(questions)
        )

    # ------------------------------------------------------------ questions

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
        (stored, with its question_id set, unless `store` is False).

        `threshold` is the grade a passage needs to count as evidence; `max_corrections`
        the corrective retrieval rounds allowed; `external` the scholarly searches consulted when
        the papers do not answer: names ("arxiv,openalex"; "off" for none), adapter objects, or
        None for READER_EXTERNAL_SEARCH (off by default); `on_stage(stage)` is told before each
        LLM call."""
        from reader.crag.pipeline import crag_config

        config = crag_config(self.settings.crag, threshold=threshold, max_corrections=max_corrections)
        return self._ask(
            question, paper, config, external=self.external_searches(external), store=store, on_stage=on_stage
        )

    def external_searches(self, external=None) -> list:
        """The scholarly search adapters for `external` (see `ask`); [] when none is enabled."""
        from reader.crag.scholarly import scholarly_searches

        if external is not None and not isinstance(external, str):
            return list(external) if isinstance(external, (list, tuple)) else [external]
        names = self.settings.external_search if external is None else external
        try:
            return scholarly_searches(
                names,
                semantic_scholar_key=self.settings.semantic_scholar_key,
                mailto=self.settings.openalex_mailto,
            )
        except ReaderError as exc:
            where = "READER_EXTERNAL_SEARCH" if external is None else "--external"
            raise ConfigError(f"{where}={names!r}: {exc}") from None

    def _ask(
        self,
        question: str,
        paper: str | None,
        config,
        *,
        external=None,
        store: bool = True,
        on_stage: Notice | None = None,
    ):
        from reader.crag.store import save_question
        from reader.store.db import transaction
        from reader.store.queries import library_titles

        if not question or not question.strip():
            raise ReaderError(
                "the question is empty: write what you want to know, e.g. "
                'reader ask "Which baselines do they compare against?"'
            )
        with self.services.db() as session:
            titles = library_titles(session)
        if not titles:
            raise ReaderError("the library is empty: add papers first with `reader ingest PATH`")
        paper_id = None
        if paper is not None:
            paper_id = paper if paper in titles else self._paper_id(paper)
        result = self.services.answer(
            question, paper_id, config, titles=titles, external=external, on_stage=on_stage
        )
        if store:
            with transaction(self.services.db) as session:
                result.question_id = save_question(session, result)
        return result

    def calibrate(
        self,
        questions_file: str | Path,
        thresholds: list[float],
        *,
        ids: list[str] | None = None,
        limit: int | None = None,
        routings: list[str] | None = None,
        theta_highs: list[float] | None = None,
        theta_lows: list[float] | None = None,
        quote_thresholds: list[float | None] | None = None,
        refusals: list[str] | None = None,
        keep_thresholds: list[float] | None = None,
        ungrounded: list[str] | None = None,
        answer_p_yes: list[float] | None = None,
        graders: list[bool] | None = None,
        on_progress: Notice | None = None,
        on_row=None,
    ):
        """Run a labelled question file through `ask` for every setting of the grid (routing rule x
        grade threshold, x theta_high x theta_low for confidence routing, x quote threshold x who
        may refuse) ->
        CalibrationReport, with the recommended setting; `on_row(setting, row)` sees each answer."""
        from reader.crag.calibrate import (
            CalibrationReport,
            grid,
            load_questions,
            run_calibration,
            select_questions,
        )
        from reader.store.queries import paper_keys

        questions = select_questions(load_questions(questions_file), str(questions_file), ids, limit)
        with self.services.db() as session:
            library = paper_keys(session)

        def run_one(question: str, paper_id: str | None, config):
            return self._ask(question, paper_id, config, store=False)

        settings = grid(
            thresholds,
            routings=routings,
            theta_highs=theta_highs,
            theta_lows=theta_lows,
            quote_thresholds=quote_thresholds,
            refusals=refusals,
            keep_thresholds=keep_thresholds,
            ungrounded=ungrounded,
            answer_p_yes=answer_p_yes,
            graders=graders if graders is not None else [self.settings.crag.grader],
        )
        return CalibrationReport(
            run_calibration(
                questions, settings, run_one, library=library, on_progress=on_progress, on_row=on_row
            )
        )

    def write_routing(self, setting: dict) -> Path:
        """Store a calibrated routing setting ({"routing", "threshold"[, "theta_high", "theta_low"]})
        in the config file (READER_CONFIG, else READER_HOME/config.toml); returns its path."""
        from reader.config import write_config_values

        path = self.settings.config_file or self.settings.home / "config.toml"
        return write_config_values(path, {f"crag_{key}": value for key, value in setting.items()})

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
        """Ingest, read and audit every paper under `paths`, resumably -> ReviewReport.

        The files are queued (as `enqueue` does) and reviewed by `jobs` workers in this
        process, the engine of `work`, until none of them is left. Papers already reviewed are
        skipped unless `force`; a failing paper is reported in its row and never stops the
        others. `zotero` (a ZoteroLibrary from `zotero_library`) reviews its items instead, each
        stored with its Zotero metadata."""
        from reader.ingest.pipeline import find_sources
        from reader.review import PaperReview

        if zotero is not None:
            return self._review_zotero(zotero, jobs, force, on_event=on_event, stop=stop)
        paths = _as_list(paths)
        sources, missing = find_sources([str(p) for p in paths])
        if not sources and not missing:
            raise ReaderError(
                f"no .pdf, .txt or .md files under {', '.join(map(str, paths))}: give a folder of papers"
            )
        report = self._review_sources(sources, self._ingest_data, jobs, force, on_event, stop)
        for item in missing:
            report.papers.append(
                PaperReview(source=str(item.file), status="error", error=item.error or "cannot read it")
            )
        return report

    def _review_zotero(self, library, jobs: int, force: bool, *, on_event=None, stop=None):
        from reader.ingest.pipeline import apply_zotero, apply_zotero_to_stored
        from reader.text.paths import stored_path

        by_label = {stored_path(item.pdf): item for item in library.items}  # as queued
        done, notes = apply_zotero_to_stored(self.services.db, library.items)
        notes = library.lines() + notes

        def ingest_data(data: bytes, label: str):
            result = self._ingest_data(data, label)
            item = by_label.get(label)
            fresh = result.status != "error" and result.paper_id and result.paper_id not in done
            if item is not None and fresh:
                note = apply_zotero(self.services.db, result.paper_id, item)
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
            db=self.services.db,
            ingest_data=ingest_data,
            read_paper=self._read_queued,
            read_limits=self._ingest_limits(),
            force=force,
            jobs=jobs,
            lease_s=self.settings.queue_lease_s,
            max_attempts=self.settings.queue_attempts,
            patience_s=self.settings.database_patience_s,
            on_event=on_event,
            stop=stop,
            warm_up=self._warm_up,
        )

    # ------------------------------------------------------------ the queue (docs/scale.md)

    def enqueue(self, paths: Iterable[str | Path], force: bool = False, fresh: bool = False):
        """Put the papers under `paths` on the queue for `reader worker` and return at once ->
        EnqueueReport. The files' bytes go into the database, so a worker on any machine
        reads them; each file is queued once (by content)."""
        from reader.ingest.pipeline import find_sources
        from reader.review import EnqueueRow, enqueue_sources

        paths = _as_list(paths)
        sources, missing = find_sources([str(p) for p in paths])
        if not sources and not missing:
            raise ReaderError(
                f"no .pdf, .txt or .md files under {', '.join(map(str, paths))}: give a folder of papers"
            )
        report = enqueue_sources(
            self.services.db, sources, force=force, limits=self._ingest_limits(), fresh=fresh
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

        return run_worker(
            db=self.services.db,
            ingest_data=self._ingest_data,
            read_paper=self._read_queued,
            lease_s=self.settings.queue_lease_s,
            max_attempts=self.settings.queue_attempts,
            jobs=jobs,
            once=once,
            until_empty=until_empty,
            poll_s=poll_s,
            patience_s=self.settings.database_patience_s,
            stop=stop,
            abandon=abandon,
            on_event=on_event,
            on_notice=self.notice,
            warm_up=self._warm_up,
        )

    def _warm_up(self) -> None:
        """What a worker loads before its first claim (Services.warm_up)."""
        self.services.warm_up()

    def jobs(self, *, queued_only: bool = False):
        """Every review job: queued / running (which worker, since when) / done / failed -> JobsReport."""
        from reader.queue import job_status

        return JobsReport(job_status(self.services.db, queued_only=queued_only))

    def _ingest_data(self, data: bytes, label: str):
        from reader.ingest.pipeline import ingest_data

        return ingest_data(
            data,
            label,
            self.services.db,
            index=self.services.search_index,
            label=label,
            limits=self._ingest_limits(),
        )

    def _ingest_limits(self):
        """What one file may cost ingest: the READER_INGEST_* settings as IngestLimits."""
        from reader.ingest.limits import IngestLimits

        return IngestLimits.of(self.settings)

    def _read_queued(self, paper_id: str, *, on_progress: Notice | None = None, db=None, fresh: bool = False):
        """Deep read for a worker: its commits go through `db` (fenced by the job's claim);
        `fresh` (a job queued to be read afresh): no cached LLM answer is used."""
        return self.services.read_paper(paper_id, db=db, on_progress=on_progress, fresh=fresh)

    def export(self, out: str | Path, papers: Iterable[str] | None = None, *, lookup: str | None = None):
        """Write one annotated Markdown note per reviewed paper, plus index.md -> ExportResult.
        `lookup` ("crossref", "openalex", "semantic-scholar" or "off"; None: READER_REFERENCE_LOOKUP,
        off by default) checks each cited reference there."""
        from reader.export import export_notes

        paper_ids = None if papers is None else [self._paper_id(ref) for ref in _as_list(papers)]
        service = self.settings.reference_lookup if lookup is None else lookup
        checker = None
        if service and service != "off":
            from reader.export.lookup import ReferenceLookup

            checker = ReferenceLookup(
                service,
                mailto=self.settings.openalex_mailto,
                api_key=self.settings.semantic_scholar_key,
            )
        return export_notes(self.services.db, paper_ids, Path(out), lookup=checker)

    def bibtex(self, out: str | Path, papers: Iterable[str] | None = None):
        """Write the BibTeX entries of the reviewed papers (or of `papers`) to the file `out` -> BibtexResult."""
        from reader.export import export_bibtex

        paper_ids = None if papers is None else [self._paper_id(ref) for ref in _as_list(papers)]
        return export_bibtex(self.services.db, paper_ids, Path(out))

    def zotero_note(self, papers: Iterable[str] | None = None, *, base_url: str | None = None):
        """Write each paper's audited note, with the reader's judgements, follow-up questions and
        highlights, as a child note of its Zotero item through Zotero's web API -> ZoteroNoteReport.
        `papers` None: every paper from Zotero. Writing again updates the note written before,
        unless it was edited in Zotero since (then a new note is written beside it). Needs
        READER_ZOTERO_LIBRARY and READER_ZOTERO_API_KEY; `base_url` points elsewhere (tests)."""
        from reader.export.zotero_note import BASE_URL, ZoteroNotes, write_notes

        library, key = self.settings.zotero_library, self.settings.zotero_api_key
        if not library or not key:
            raise ConfigError(
                "writing notes into Zotero needs READER_ZOTERO_LIBRARY (users/ID or groups/ID) and "
                "READER_ZOTERO_API_KEY (a key with write access; zotero.org/settings/keys)"
            )
        paper_ids = None if papers is None else [self._paper_id(ref) for ref in _as_list(papers)]
        return write_notes(
            self.services.db, paper_ids, ZoteroNotes(library, key, base_url=base_url or BASE_URL)
        )

    def note(self, paper_id: str) -> tuple[str, str]:
        """(file name, Markdown text) of one reviewed paper's note."""
        from reader.export.markdown import collect_note, note_file_name, render_note
        from reader.store.tables import Paper

        with self.services.db() as session:
            paper = session.get(Paper, paper_id)
            if paper is None:
                raise PaperNotFound(f"no paper with id {paper_id!r}; pick one from the library")
            note = collect_note(session, paper)
            if note is None:
                raise ReaderError(
                    f"{paper.title!r} has no review yet, so there is no note to download; "
                    f"upload it again or run `reader review` on it."
                )
            return note_file_name(paper.title, paper.id), render_note(note)

    def stats(self, paper: str | None = None):
        """LLM calls, cache hits, errors, tokens and time per stage, model and paper -> UsageReport."""
        from reader.store.usage import usage_report

        return usage_report(self.services.db, paper)


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


def _as_list(items) -> list:
    return [items] if isinstance(items, (str, Path)) else list(items)
