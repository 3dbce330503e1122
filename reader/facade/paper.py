"""One stored paper and what belongs to it: `reader.paper(ref)`.

    paper = reader.paper("sparta")          # an id, id prefix, file path or title prefix
    paper.info.title
    paper.analyses()                        # the stored critique and synthesis, audited
    paper.judge("critique-3", "supported", comment="Table 3 shows it.")
    paper.highlight(2, [[0.1, 0.1, 0.5, 0.12]], "grain yield fell", "check the control plot")
    name, text = paper.note()
    paper.table_row().cells["task"]        # its row of the extraction table, audited
    paper.figures("figs/")                  # its figures' pictures as PNG files

Each method works on the stored paper through the composition root (reader.services).
"""

from __future__ import annotations

from reader.errors import ReaderError
from reader.services import Services


def no_note_yet(title: str) -> ReaderError:
    """What asking for the note of a paper with no review yet is told."""
    return ReaderError(
        f"{title!r} has no review yet, so there is no note to download; "
        f"upload it again or run `reader review` on it."
    )


class Paper:
    def __init__(self, services: Services, paper_id: str):
        """A paper known to be stored (Reader.paper resolves the reference)."""
        self._services = services
        self.id = paper_id

    def __repr__(self) -> str:
        return f"Paper({self.id!r})"

    @property
    def info(self):
        """The paper as `reader papers` lists it -> PaperInfo."""
        from reader.store.queries import list_papers

        with self._services.db() as session:
            return list_papers(session, self.id)[0]

    def analyses(self, *, user: str | None = None):
        """Its stored critique and synthesis with their verdicts, how each was decided, the
        reader's judgements and highlights (those of account `user` on a shared server), and its
        rigour checklist (stored by the read, else by the rules alone) -> StoredAnalyses."""
        from reader.annotations.highlights import with_highlights
        from reader.annotations.judgements import with_judgements
        from reader.audit.record import stored_analyses
        from reader.checklist import checklist_of
        from reader.store.tables import Paper as PaperRow

        with self._services.db() as session:
            stored = stored_analyses(session, session.get(PaperRow, self.id))
            with_judgements(session, stored, user)
            with_highlights(session, stored, user)
            checklist = checklist_of(session, stored.paper_id)
            stored.checklist = checklist.to_json() if checklist is not None else None
            return stored

    def followups(self) -> list:
        """The follow-up questions of its review, answered -> list[FollowUpItem]."""
        from reader.store.queries import followups_of

        with self._services.db() as session:
            return followups_of(session, self.id)

    def note(self, *, user: str | None = None) -> tuple[str, str]:
        """(file name, Markdown text) of its note, with its Tables and Figures sections (their CSV
        and picture files are written by `reader export`) and `user`'s judgements and highlights
        (None: the single-user mode's); ReaderError when it has no review yet."""
        from reader.export import note_text
        from reader.export.markdown import collect_note
        from reader.store.tables import Paper as PaperRow

        with self._services.db() as session:
            paper = session.get(PaperRow, self.id)
            note = collect_note(session, paper, user=user)
            if note is None:
                raise no_note_yet(paper.title)
            return note.file_name, note_text(session, note, paper.id)[0]

    def judge(
        self,
        sentence: str,
        verdict: str | None,
        *,
        comment: str = "",
        by: str = "",
        expected: str | None = None,
        seen: str | None = None,
        user: str | None = None,
    ):
        """Keep the reader's own verdict of one sentence of its review -> JudgementResult.

        `sentence`: its id, `critique-3` (as `reader show --verdicts` numbers them); `verdict`
        "supported" (overrules a [待验证] flag), "unsupported" (confirms one, or flags a passed
        sentence) or None (withdraws it); `user`: the account (`reader serve --accounts`; None: the
        single-user mode). Refused when the sentence is not `expected` (its sentence_key) or the
        judgement changed since `seen` (judgement_state; Conflict); else the last writer wins."""
        from sqlalchemy.exc import IntegrityError

        from reader.annotations.judgements import JUDGEMENT_LOCK, JudgementResult, changed_meanwhile, judge
        from reader.errors import Conflict
        from reader.store.db import transaction
        from reader.store.tables import Paper as PaperRow

        try:
            with transaction(self._services.db, lock=JUDGEMENT_LOCK) as session:
                audited, judgement, withdrawn = judge(
                    session,
                    self.id,
                    sentence,
                    verdict,
                    comment=comment,
                    judged_by=by,
                    expected_key=expected,
                    seen=seen,
                    user=user,
                )
                return JudgementResult(
                    paper_id=self.id,
                    title=session.get(PaperRow, self.id).title,
                    sentence_id=sentence.strip().lower(),
                    sentence=audited.text,
                    audit_verdict=audited.verdict,
                    judgement=judgement,
                    withdrawn=withdrawn,
                )
        except IntegrityError:  # a writer that did not take the lock (an older version) came first
            raise Conflict(changed_meanwhile(sentence)) from None

    def highlight(self, page: int, rects: list, text: str, note: str = "", *, user: str | None = None):
        """Keep the reader's own highlight of text on one page of its PDF -> HighlightItem.

        `rects`: where the text stands on the page, [[x0, y0, x1, y1], ...] as fractions of the
        page's width and height; `note` (at most 2,000 characters) is optional; `user` the
        account it belongs to on a shared server (None: the single-user mode)."""
        from reader.annotations.highlights import add_highlight
        from reader.store.db import transaction
        from reader.store.tables import Paper as PaperRow

        with transaction(self._services.db) as session:
            return add_highlight(session, session.get(PaperRow, self.id), page, rects, text, note, user)

    def delete_highlight(self, highlight_id: int, *, user: str | None = None) -> bool:
        """Remove one of its highlights (one of account `user`'s); False when it has none by that id."""
        from reader.annotations.highlights import delete_highlight
        from reader.store.db import transaction

        with transaction(self._services.db) as session:
            return delete_highlight(session, self.id, highlight_id, user)

    def figures(self, out_dir=None):
        """Write its figures' pictures as PNG files into `out_dir` (the current folder when None),
        under the names its exported note uses -> FigureFiles (each figure with its file)."""
        from pathlib import Path

        from reader.export.figures import export_figures
        from reader.store.paper_figures import paper_figures
        from reader.store.tables import Paper as PaperRow

        with self._services.db() as session:
            title = session.get(PaperRow, self.id).title or ""
            figures = paper_figures(session, self.id)
        return export_figures(self.id, title, figures, Path(out_dir) if out_dir is not None else Path.cwd())

    def table_row(self, *, stored_only: bool = False, columns=(), questions=()):
        """Its row of the extraction table, every cell audited -> TableRow (see
        Library.extraction_table for the options)."""
        table = self._services.extraction_table(
            [self.id], stored_only=stored_only, columns=list(columns), questions=list(questions)
        )
        return table.rows[0]

    def cites(self):
        """Its reference entries, each with the library paper it cites where the library holds
        it (matched by DOI, else by title) -> CitationList (reader.ingest.links)."""
        return self._citations("cites")

    def cited_by(self, *, external=None):
        """The library's reference entries that cite it -> CitationList; with external search on
        (READER_EXTERNAL_SEARCH or `external`, as for `ask`), also the works that Semantic Scholar
        and OpenAlex know to cite it (by its DOI)."""
        from reader.store.tables import Paper as PaperRow

        found = self._citations("cited_by")
        with self._services.db() as session:
            doi = session.get(PaperRow, self.id).doi
        for adapter in self._services.external_searches(external):
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

    def _citations(self, direction: str):
        from reader.ingest import links
        from reader.store.db import transaction
        from reader.store.tables import Paper as PaperRow

        with transaction(self._services.db) as session:
            links.ensure_linked(session)
            title = session.get(PaperRow, self.id).title
            entries = (
                links.cites(session, self.id) if direction == "cites" else links.cited_by(session, self.id)
            )
            return links.CitationList(self.id, title or "", direction, entries)

    def remove(self):
        """Delete it and everything derived from it: its rows, its passages in the search index,
        its page images and uploaded copy -> PaperInfo of what was removed."""
        info = self.info
        self._services.remove_paper(self.id)
        return info
