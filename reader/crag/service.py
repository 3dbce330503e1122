"""Answering one question over the library: the CRAG pipeline wired to the app's
search index, LLM roles and database (used by `reader ask` and the web page)."""

from __future__ import annotations

from reader.errors import PaperNotFound, ReaderError


def library_titles(session) -> dict[str, str]:
    from sqlalchemy import select

    from reader.store.tables import Paper

    return {pid: title for pid, title in session.execute(select(Paper.id, Paper.title))}


def ask_question(app, question: str, paper_id: str | None = None, *, config=None, external=None,
                 store: bool = True):
    """Answer one question with CRAG over the app's library and store it (table questions)."""
    from reader.crag.grounded import audit_grounded
    from reader.crag.pipeline import ask
    from reader.crag.store import save_question
    from reader.store.db import transaction

    if not question or not question.strip():
        raise ReaderError("the question is empty: write what you want to know, e.g. "
                          "reader ask \"Which baselines do they compare against?\"")
    with app.db() as session:
        titles = library_titles(session)
    if not titles:
        raise ReaderError("the library is empty: add papers first with `reader ingest PATH`")
    if paper_id is not None and paper_id not in titles:
        raise PaperNotFound(f"paper {paper_id} is not in the library; see `reader papers`")
    result = ask(question, paper_id=paper_id, generator=app.generator, verifier=app.verifier,
                 search=app.search_index.search, check_grounded=audit_grounded, external=external, titles=titles,
                 config=config)
    if store:
        with transaction(app.db) as session:
            save_question(session, result)
    return result
