"""The composition root: what the stages need, built once from the settings.

    services = Services(load_settings())
    services.read_paper(paper_id)          # the deep read, wired once for every caller

A Services holds the database, the search index, the two LLM roles (the generator writes,
the verifier checks) wrapped with the call log and response cache, the claim checker and the
relevance grader. Each is built on first use. It wires every stage once: ingest and removal
(with the paper's page images and uploads), the deep read, the audit of any text, the question
pipeline, the extraction table, the review queue's workers (WorkerStages, WorkerOptions), the
notes' reference lookup and the Zotero client. The stages get these passed in; this is the only
module that builds them. `reader.Reader` and the objects it hands out (reader/facade/) are the
public surface over it.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import shutil
from collections.abc import Callable
from functools import cached_property

from reader.config import Settings
from reader.errors import ConfigError, ReaderError, WeightsUnusable

Notice = Callable[[str], None]


class Services:
    def __init__(
        self,
        settings: Settings,
        *,
        llm=None,
        verifier=None,
        embedder=None,
        checker=None,
        grader=None,
        use_cache: bool | None = None,
        on_notice: Notice | None = None,
    ):
        """`llm` writes, and also checks unless a separate `verifier` is given (both any
        reader.llm.base.LLM; logged and cached like the built-in ones); `embedder` replaces the
        packaged embedding model; `checker` (anything with `score(claims, evidence_lists)`) the
        shipped claim checker, used when READER_CHECKER is on; `grader` (anything with
        `grade(question, passages)`) the shipped relevance grader, used when READER_CRAG_GRADER is on."""
        self.settings = settings
        self.use_cache = settings.cache if use_cache is None else use_cache
        self._llm, self._verifier, self._embedder, self._checker = llm, verifier, embedder, checker
        self._grader = grader
        self.notice: Notice = on_notice or logging.getLogger("reader").warning

    @cached_property
    def db(self):
        """sessionmaker for a database at the newest migration."""
        from reader.store.db import open_database

        try:
            self.settings.home.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"READER_HOME={self.settings.home}: cannot create it ({exc.strerror}); "
                "set READER_HOME to a folder you can write"
            ) from None
        return open_database(self.settings.database_url)

    @cached_property
    def search_index(self):
        """The BM25 + dense index over every passage (reader.index.store.SearchIndex)."""
        from reader.index.store import SearchIndex

        if self._embedder is not None:
            return SearchIndex(self.settings.index_dir, self.db, embedder=self._embedder)
        return SearchIndex.open(self.settings, self.db)

    @cached_property
    def generator(self):
        """The LLM that writes (critique, synthesis, answers)."""
        return self._role("generator", self._llm)

    @cached_property
    def verifier(self):
        """The LLM that checks (audit, groundedness); the generator's settings unless set apart."""
        return self._role("verifier", self._verifier or self._llm)

    @cached_property
    def checker(self):
        """The audit's parts beside the verifier (reader.audit.checking.CheckerBand): the trained
        claim checker at its operating point, or no scorer when READER_CHECKER is off or (with a
        warning) its weights are missing or damaged; the extraction checks (READER_EXTRACTION);
        the control claim (READER_VERIFY_CONTROL)."""
        from reader.audit.checking import CheckerBand

        control = self.settings.verify_control == "on" or (
            self.settings.verify_control == "auto" and not self.settings.verifier.is_embedded
        )
        parts = {"extraction": self.settings.extraction, "control": control}
        if not self.settings.checker:  # the band then carries the extraction checks and the control
            return CheckerBand(None, 0.0, 1.0, **parts)
        from reader.checker.model import shared_checker

        scorer = self._checker if self._checker is not None else shared_checker()
        try:
            if hasattr(scorer, "load"):
                scorer.load()  # here, so damaged weights are one warning, not a failed audit
        except WeightsUnusable as exc:
            self.notice(f"{exc}; the claim checker is off meanwhile: the verifier decides every sentence")
            return CheckerBand(None, 0.0, 1.0, **parts)
        return CheckerBand(scorer, self.settings.checker_low, self.settings.checker_high, **parts)

    @cached_property
    def relevance_grader(self):
        """The trained relevance grader `reader ask` grades passages with where its configuration
        turns it on (READER_CRAG_GRADER, or a calibration grid's point); it loads when first used."""
        from reader.grader.model import shared_grader

        return self._grader if self._grader is not None else shared_grader()

    def _role(self, role: str, given):
        from reader.llm.factory import build_llm
        from reader.llm.logged import LoggedLLM
        from reader.store.calls import CallStore

        calls = CallStore(self.db)
        if given is None:
            return build_llm(self.settings, role, calls, use_cache=self.use_cache)
        return LoggedLLM(given, role, calls, use_cache=self.use_cache)

    def index_or_none(self):
        """The search index, or None with a notice: a broken index must not stop papers from being stored."""
        try:
            return self.search_index
        except Exception as exc:
            self.notice(
                f"search index unavailable ({exc}); papers are stored without it "
                "and indexed later by `reader reindex`"
            )
            return None

    def warm_up(self) -> None:
        """Load what reading a paper needs before the first one (a worker does this before it
        claims a paper, so no lease time goes to it): the LLM roles, the search index (built
        from the database's vectors on a new machine), the modules of the stages, the prompt
        templates and, with an OpenAI-compatible endpoint, its client."""
        import bm25s  # noqa: F401
        import pymupdf  # noqa: F401
        from wordfreq import zipf_frequency

        import reader.audit.record  # noqa: F401
        import reader.deepread.read  # noqa: F401
        import reader.ingest.pdf  # noqa: F401
        from reader import prompts
        from reader.llm.openai_compat import OpenAICompatLLM

        zipf_frequency("paper", "en")  # loads the word list the audit's guards use
        for template in sorted(prompts.PROMPTS_DIR.glob("*.j2")):  # compiled once, ~0.1 s
            prompts.environment().get_template(template.name)
        for role in (self.generator, self.verifier):
            endpoint = getattr(role, "inner", role)
            if isinstance(endpoint, OpenAICompatLLM):
                endpoint.client().chat.completions  # noqa: B018 - importing it took a second

    # ------------------------------------------------------------ the library, wired once

    @cached_property
    def ingest_limits(self):
        """What one file may cost ingest: the READER_INGEST_* settings (reader.ingest.limits)."""
        from reader.ingest.limits import IngestLimits

        return IngestLimits.of(self.settings)

    def ingest_paths(self, paths: list[str], *, on_result=None, before_file=None):
        """Parse files and folders into the library -> list[IngestResult] (reader.ingest.pipeline)."""
        from reader.ingest.pipeline import ingest_paths

        return ingest_paths(
            paths,
            self.db,
            open_index=self.index_or_none,
            on_progress=on_result,
            before_file=before_file,
            limits=self.ingest_limits,
        )

    def ingest_file(self, path):
        """Ingest one file -> IngestResult."""
        from reader.ingest.pipeline import ingest_file

        return ingest_file(path, self.db, self.search_index, limits=self.ingest_limits)

    def ingest_data(self, data: bytes, label: str):
        """Ingest a file's bytes (a queued file read back from the database) -> IngestResult."""
        from reader.ingest.pipeline import ingest_data

        return ingest_data(
            data, label, self.db, index=self.search_index, label=label, limits=self.ingest_limits
        )

    def ingest_zotero(self, library, *, on_result=None, on_note: Notice | None = None):
        """Ingest a ZoteroLibrary's items with their metadata -> list[IngestResult]."""
        from reader.ingest.pipeline import ingest_zotero

        return ingest_zotero(
            library,
            self.db,
            open_index=self.index_or_none,
            on_progress=on_result,
            on_note=on_note or self.notice,
            limits=self.ingest_limits,
        )

    def import_records(self, records: list, services: str, base_urls: dict):
        """Store bibliographic records (reader.ingest.identifiers) -> ImportReport; `services`
        (comma-separated, "" for none) are asked for their metadata and open-access PDF."""
        from reader.ingest.fetch import Fetcher
        from reader.ingest.importing import import_records

        fetcher = Fetcher(services.split(","), self.settings.openalex_mailto, base_urls) if services else None
        return import_records(
            records,
            self.db,
            self.index_or_none(),
            fetcher,
            self.ingest_limits,
            keep_dir=self.settings.home / "uploads",
        )

    def remove_paper(self, paper_id: str) -> None:
        """Delete a paper and everything derived from it: its rows (reader.ingest.pipeline), its
        passages in the search index, its page images and its uploaded copy. The one delete of
        `reader rm` and the web page's Delete."""
        from reader.ingest.pipeline import remove_paper

        index = self.index_or_none()
        remove_paper(self.db, paper_id)
        if index is not None:
            try:
                index.remove_paper(paper_id)
            except Exception as exc:  # the database is the source of truth; the index catches up
                self.notice(f"search index not updated ({exc}); it drops the paper on next use")
        home = self.settings.home
        shutil.rmtree(home / "pages" / paper_id, ignore_errors=True)
        (home / "uploads" / f"{paper_id}.pdf").unlink(missing_ok=True)
        shutil.rmtree(home / "uploads" / paper_id, ignore_errors=True)

    def reference_lookup(self, service: str | None):
        """The checker of cited references for the notes (reader.export.lookup), None when off;
        `service` None: READER_REFERENCE_LOOKUP."""
        service = self.settings.reference_lookup if service is None else service
        if not service or service == "off":
            return None
        from reader.export.lookup import ReferenceLookup

        return ReferenceLookup(
            service, mailto=self.settings.openalex_mailto, api_key=self.settings.semantic_scholar_key
        )

    def external_searches(self, external=None) -> list:
        """The scholarly search adapters for `external`: names ("arxiv,openalex"; "off" for
        none), adapter objects, or None for READER_EXTERNAL_SEARCH; [] when none is enabled."""
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

    def zotero_notes(self, base_url: str | None = None):
        """The client that writes notes into Zotero through its web API (reader.export.zotero_note)."""
        from reader.export.zotero_note import BASE_URL, ZoteroNotes

        library, key = self.settings.zotero_library, self.settings.zotero_api_key
        if not library or not key:
            raise ConfigError(
                "writing notes into Zotero needs READER_ZOTERO_LIBRARY (users/ID or groups/ID) and "
                "READER_ZOTERO_API_KEY (a key with write access; zotero.org/settings/keys)"
            )
        return ZoteroNotes(library, key, base_url=base_url or BASE_URL)

    # ------------------------------------------------------------ the review queue, wired once

    def worker_stages(self, ingest_data=None):
        """What the review engine's workers call (reader.review.worker.WorkerStages): this
        database, ingest of a queued file's bytes (or `ingest_data`), the deep read, the warm-up."""
        from reader.review import WorkerStages

        return WorkerStages(
            db=self.db,
            ingest_data=ingest_data or self.ingest_data,
            read_paper=self.read_paper,
            warm_up=self.warm_up,
            on_notice=self.notice,
        )

    def worker_options(self, **chosen):
        """The review engine's options (reader.review.worker.WorkerOptions): the queue's lease,
        attempts and patience from the settings, and what the caller chose."""
        from reader.review import WorkerOptions

        return WorkerOptions(
            lease_s=self.settings.queue_lease_s,
            max_attempts=self.settings.queue_attempts,
            patience_s=self.settings.database_patience_s,
            skip_near_duplicates=not self.settings.review_near_duplicates,
            **chosen,
        )

    # ------------------------------------------------------------ the stages, wired once

    def read_paper(
        self,
        paper_id: str,
        *,
        db=None,
        on_progress: Notice | None = None,
        context_tokens: int | None = None,
        words: int | None = None,
        fresh: bool = False,
        followup: bool | None = None,
    ):
        """Write and audit a stored paper's critique and synthesis -> DeepReadResult. Its commits
        go through `db` when given (a worker's, fenced by its claim on the paper); a paper stored
        by another process or machine is first added to this one's index. `fresh`: every
        prompt goes to the LLMs, none is answered from the cache (new answers still replace
        the cached ones). `followup` (None: READER_FOLLOWUP) asks the follow-up questions when
        the audit passed (`follow_up`)."""
        from reader.deepread.read import deep_read

        self.search_index.ensure_paper(paper_id)
        generator, verifier = self.generator, self.verifier
        if fresh:
            generator, verifier = generator.uncached(), verifier.uncached()
        result = deep_read(
            paper_id,
            db=db or self.db,
            generator=generator,
            verifier=verifier,
            search=self.search_index.search,
            on_progress=on_progress,
            context_tokens=context_tokens,
            target_words=words,
            max_workers=self.settings.verifier.max_concurrency,
            output_language=self.settings.output_language,
            yes_threshold=self.settings.verify_threshold,
            checker=self.checker,
        )
        n = self.settings.followup if followup is not False else 0
        result.followups = self.follow_up(
            paper_id,
            [k.loop.final_text for k in result.analyses],
            [k.loop.final.flagged_ratio for k in result.analyses],
            n=n,
            settled=result.tool_findings(),
            db=db,
            on_progress=on_progress,
        )
        return result

    def follow_up(
        self,
        paper_id: str,
        texts: list[str],
        ratios: list[float],
        *,
        n: int,
        settled: set[str] = frozenset(),
        db=None,
        on_progress=None,
    ):
        """The follow-up questioner (reader.crag.followup): when the review passed its audit, `n`
        questions from its open points (the `settled` sentences, the tool's checklist findings, left
        out), those the relevance grader finds the paper's passages answer best (when the grader is
        on) asked first, each answered over the paper, more asked while fewer than n found an answer, stored
        with the review in place of the earlier review's -> FollowUps (`skipped` says why none was
        asked). A failure here is a note, never a failed review."""
        from reader.crag import followup
        from reader.crag.pipeline import crag_config
        from reader.crag.store import replace_followups
        from reader.store.db import transaction
        from reader.store.queries import library_titles

        done = followup.FollowUps()
        progress = on_progress or (lambda message: None)
        try:
            if n <= 0:
                done.skipped = "the follow-up questioner is off (READER_FOLLOWUP, --no-followup)"
            elif not followup.audit_passed(ratios):
                done.skipped = "the review did not pass its audit (a text over the flagged ratio)"
            else:
                points = followup.open_points(texts, settled)
                with (db or self.db)() as session:
                    titles = library_titles(session)
                # about this paper only: another paper's passage answers no question of its review
                config = dataclasses.replace(crag_config(self.settings.crag), collection_fallback=False)
                best_window = (lambda text: self.best_window(text, paper_id)) if config.grader else None
                title = titles.get(paper_id, "")
                try:
                    questions, done.by = followup.questions_to_ask(
                        title, points, self.generator, n, best_window, min_relevance=config.writer_bar
                    )
                except WeightsUnusable as exc:
                    self.notice(f"{exc}; the follow-up questions are written from the review alone")
                    questions, done.by = followup.questions_to_ask(title, points, self.generator, n)
                if not questions:
                    done.skipped = "the review names no open point to ask about"
                done.answers = followup.ask_until_answered(
                    questions,
                    # about the paper's content by construction: no intent routing ("What is the
                    # relationship between X and Y?" went to the citation graph)
                    lambda question: self._passages(
                        question, paper_id, config, (self.generator, self.verifier), titles, None
                    ),
                    n,
                    on_question=lambda question: progress(f"follow-up: {question}"),
                )
            with transaction(db or self.db) as session:
                replace_followups(session, paper_id, done.answers)
        except Exception as exc:  # noqa: BLE001 - the review stands without them
            done.skipped = f"the follow-up questions failed: {type(exc).__name__}: {exc}"
            self.notice(f"{done.skipped}; the review is stored without them")
        if done.skipped:
            progress(f"follow-up: none asked ({done.skipped})")
        return done

    def best_window(self, text: str, paper_id: str):
        """The relevance grader's best window for `text` among the paper's passages that the
        question pipeline's retrieval finds for it (reader.crag.correct.retrieve_all: the reference
        list left out) -> reader.grader.model.Relevance, or None when there are none."""
        from reader.crag.correct import retrieve_all

        found = retrieve_all([text], self.search_index.search, paper_id, origin="retrieval", max_workers=1)
        passages = [candidate.text for candidate in found]
        graded = self.relevance_grader.grade(text, passages) if passages else []
        return max(graded, key=lambda r: r.p_relevant, default=None)

    def audit_text(self, text: str, paper_id: str):
        """Check any text sentence by sentence against a stored paper -> AuditReport."""
        from reader.deepread.read import audit_against_paper

        return audit_against_paper(
            text,
            paper_id,
            db=self.db,
            verifier=self.verifier,
            search=self.search_index.search,
            max_workers=self.settings.verifier.max_concurrency,
            yes_threshold=self.settings.verify_threshold,
            checker=self.checker,
        )

    def extraction_table(self, paper_ids: list[str], *, stored_only: bool = False, columns=(), questions=()):
        """The extraction table of stored papers, every cell audited -> ExtractionTable
        (reader.table); a paper stored by another process is first added to this one's index.
        `columns`: checklist items to add; `questions`: the user's own, each asked of every paper
        with the question pipeline. `stored_only`: from the LLMs' stored answers alone, with no
        model call and nothing written (NotStored when one is missing): what a GET serves."""
        from reader.deepread.read import audit_claims
        from reader.table import build_table

        verifier = self.verifier.stored_only() if stored_only else self.verifier
        if not stored_only:
            for paper_id in dict.fromkeys(paper_ids):
                self.search_index.ensure_paper(paper_id)

        def audit_cells(paper_id: str, claims: list[str], evidence_for):
            return audit_claims(
                claims,
                paper_id,
                db=self.db,
                verifier=verifier,
                evidence_for=evidence_for,
                max_workers=self.settings.verifier.max_concurrency,
                yes_threshold=self.settings.verify_threshold,
                checker=self.checker,
            )

        return build_table(
            paper_ids,
            db=self.db,
            search=self.search_index.search,
            audit_claims=audit_cells,
            columns=columns,
            questions=questions,
            ask=self._table_question(stored_only) if questions else None,
        )

    def _table_question(self, stored_only: bool):
        """A user's column of the extraction table: its question through the question pipeline
        over one paper (its answer checked there against its passages), from stored answers alone
        when `stored_only`."""
        from reader.crag.pipeline import crag_config
        from reader.store.queries import library_titles

        roles = (self.generator, self.verifier)
        if stored_only:
            roles = tuple(role.stored_only() for role in roles)
        with self.db() as session:
            titles = library_titles(session)
        config = crag_config(self.settings.crag)
        return lambda question, paper_id: self._passages(question, paper_id, config, roles, titles, None)

    def answer(
        self,
        question: str,
        paper_id: str | None,
        config,
        *,
        titles: dict,
        external=None,
        on_stage: Notice | None = None,
    ):
        """Corrective RAG over the library (or one paper) -> AskResult, not stored; a question
        about citations (reader.crag.intent) is answered from the citation graph instead
        (reader.crag.graph). on_stage(stage) is told before each LLM call."""
        from reader.crag.intent import CITATIONS, decide_intent

        generator, verifier = self.generator, self.verifier
        if on_stage is not None:
            generator, verifier = _StageSpy(generator, on_stage), _StageSpy(verifier, on_stage)
        intent = decide_intent(question, generator)
        if intent.route == CITATIONS:
            from reader.crag.graph import graph_answer
            from reader.store.db import transaction

            with transaction(self.db) as session:
                found = graph_answer(session, question.strip(), intent, paper_id, titles)
            if found is not None:
                found.intent, found.llm_calls = intent.to_json(), intent.calls
                return found
            intent.reason += "; it names no paper of the library, so the passages were searched"
        result = self._passages(question, paper_id, config, (generator, verifier), titles, external)
        result.intent = intent.to_json()
        result.llm_calls += intent.calls
        return result

    def _passages(self, question, paper_id, config, roles, titles, external):
        """The question pipeline over the passages (reader.crag.pipeline.ask)."""
        from reader.crag.grounded import audit_grounded
        from reader.crag.pipeline import ask

        generator, verifier = roles
        return ask(
            question,
            paper_id=paper_id,
            generator=generator,
            verifier=verifier,
            search=self.search_index.search,
            check_grounded=functools.partial(audit_grounded, checker=self.checker),
            external=external,
            titles=titles,
            config=config,
            relevance=self.relevance_grader if config.grader else None,  # loaded only when used
        )


class _StageSpy:
    """An LLM role that tells which stage each call is for, before making it."""

    def __init__(self, llm, on_stage: Notice):
        self._llm, self._on_stage = llm, on_stage

    def complete(self, messages, *args, **kwargs):
        self._on_stage(kwargs.get("stage") or "")
        return self._llm.complete(messages, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._llm, name)
