"""Questions over the library: `reader.questions`. Asking one (Corrective RAG, reader.crag),
calibrating the question pipeline on a labelled set, and keeping the calibrated setting.

    answer = reader.questions.ask("Which datasets are used?", paper="sparta")
    report = reader.questions.calibrate("eval/questions.jsonl", [0.5, 0.6], routings=["count"])
    reader.questions.write_routing(report.to_json()["recommended"])
"""

from __future__ import annotations

from pathlib import Path

from reader.errors import ReaderError
from reader.services import Services


class Questions:
    def __init__(self, services: Services):
        self._services = services

    def ask(
        self,
        question: str,
        paper: str | None = None,
        *,
        threshold: float | None = None,
        max_corrections: int | None = None,
        external=None,
        store: bool = True,
        on_stage=None,
    ):
        """Answer a question with Corrective RAG over one paper or the library -> AskResult
        (stored, with its question_id set, unless `store` is False).

        `threshold` is the grade a passage needs to count as evidence; `max_corrections`
        the corrective retrieval rounds allowed; `external` the scholarly searches consulted when
        the papers do not answer: names ("arxiv,openalex"; "off" for none), adapter objects, or
        None for READER_EXTERNAL_SEARCH (off by default); `on_stage(stage)` is told before each
        LLM call."""
        from reader.crag.pipeline import crag_config

        config = crag_config(
            self._services.settings.crag, threshold=threshold, max_corrections=max_corrections
        )
        external = self._services.external_searches(external)
        return self._ask(question, paper, config, external=external, store=store, on_stage=on_stage)

    def external_searches(self, external=None) -> list:
        """The scholarly search adapters for `external` (see `ask`); [] when none is enabled."""
        return self._services.external_searches(external)

    def _ask(self, question: str, paper: str | None, config, *, external=None, store=True, on_stage=None):
        from reader.crag.store import save_question
        from reader.store.db import transaction
        from reader.store.queries import library_titles, resolve_paper_id

        if not question or not question.strip():
            raise ReaderError(
                "the question is empty: write what you want to know, e.g. "
                'reader ask "Which baselines do they compare against?"'
            )
        db = self._services.db
        with db() as session:
            titles = library_titles(session)
        if not titles:
            raise ReaderError("the library is empty: add papers first with `reader ingest PATH`")
        paper_id = None
        if paper is not None:
            paper_id = paper if paper in titles else resolve_paper_id(db, str(paper))
        result = self._services.answer(
            question, paper_id, config, titles=titles, external=external, on_stage=on_stage
        )
        if store:
            with transaction(db) as session:
                result.question_id = save_question(session, result)
        return result

    def calibrate(
        self,
        questions_file: str | Path,
        thresholds: list[float],
        *,
        ids: list[str] | None = None,
        limit: int | None = None,
        on_progress=None,
        on_row=None,
        **dimensions,
    ):
        """Run a labelled question file through `ask` for every setting of the grid (routing rule x
        grade threshold, x theta_high x theta_low for confidence routing, x quote threshold x who
        may refuse) -> CalibrationReport, with the recommended setting; `on_row(setting, row)` sees
        each answer. `dimensions`: the grid's other lists, as reader.crag.calibrate.grid takes them
        (routings, theta_highs, theta_lows, quote_thresholds, refusals, keep_thresholds,
        ungrounded, answer_p_yes, graders); one not given takes the configured value."""
        from reader.crag.calibrate import (
            CalibrationReport,
            grid,
            load_questions,
            run_calibration,
            select_questions,
        )
        from reader.store.queries import paper_keys

        questions = select_questions(load_questions(questions_file), str(questions_file), ids, limit)
        with self._services.db() as session:
            library = paper_keys(session)

        def run_one(question: str, paper_id: str | None, config):
            return self._ask(question, paper_id, config, store=False)

        if dimensions.get("graders") is None:
            dimensions["graders"] = [self._services.settings.crag.grader]
        settings = grid(thresholds, **dimensions)
        rows = run_calibration(
            questions, settings, run_one, library=library, on_progress=on_progress, on_row=on_row
        )
        return CalibrationReport(rows)

    def write_routing(self, setting: dict) -> Path:
        """Store a calibrated routing setting ({"routing", "threshold"[, "theta_high", "theta_low"]})
        in the config file (READER_CONFIG, else READER_HOME/config.toml); returns its path."""
        from reader.config import write_config_values

        settings = self._services.settings
        path = settings.config_file or settings.home / "config.toml"
        return write_config_values(path, {f"crag_{key}": value for key, value in setting.items()})
