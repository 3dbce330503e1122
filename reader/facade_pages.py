"""What the web page asks of a Reader: the library table, a paper's page, its PDF pages and
passage boxes, stored questions, deletion and the notes zip. `Reader` inherits these; they use
the Reader's database, settings, search index, `remove`, `export` and `_ask`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from reader.errors import PaperNotFound, ReaderError

Notice = Callable[[str], None]


class WebPages:
    # ------------------------------------------------------------ what the web page shows

    def library_rows(self, title_filter: str = "", sort: str = "added", descending: bool = True):
        """The library table of the web page; `sort` is one of library_sorts()."""
        from reader import views

        with self.db() as session:
            return views.library_rows(session, title_filter=title_filter, sort=sort, descending=descending)

    @staticmethod
    def library_sorts() -> tuple[str, ...]:
        from reader.views import SORT_KEYS

        return tuple(SORT_KEYS)

    def paper_page(self, paper_id: str):
        """A paper with its audited analyses, as the web page shows it (None: no such paper)."""
        from reader import views

        with self.db() as session:
            return views.paper_view(session, paper_id)

    def paper_choices(self) -> list[tuple[str, str]]:
        from reader import views

        with self.db() as session:
            return views.paper_choices(session)


    # ------------------------------------------------------------ the web page's extras

    def ask_stored(self, question: str, paper: str | None = None, *,
                   on_stage: Notice | None = None) -> int:
        """Ask as `ask` does, telling on_stage(stage) before each LLM call; returns the id of
        the stored question (see question_page)."""
        from reader.crag.pipeline import CragConfig

        return self._ask(question, paper, CragConfig(), on_stage=on_stage).question_id

    def question_page(self, question_id: int):
        """A stored question and its answer, as the web page shows it (None: no such question)."""
        from reader import views

        with self.db() as session:
            return views.question_view(session, question_id)

    def question_history(self, limit: int = 30):
        from reader import views

        with self.db() as session:
            return views.question_history(session, limit)

    def paper_status(self, paper_id: str) -> str | None:
        """The library's status of one paper ("running: read", "reviewed", …); None: no such paper."""
        from reader import views

        with self.db() as session:
            return views.paper_status_of(session, paper_id)

    def library_search(self, words: str, sort: str = "relevance", descending: bool = True):
        """Library rows of the papers whose passages (the search index) or analyses hold `words`."""
        from reader import views

        found: dict[str, str] = {}
        if words.strip():
            for hit in self.search_index.search(words, top_k_per_path=20):
                if hit.bm25_rank is None or not hit.bm25_score:
                    continue  # the dense path finds a nearest passage for any words: not a match
                found.setdefault(hit.paper_id, f"p. {hit.page_start}: " + views.snippet(hit.text, words.split()[0]))
            with self.db() as session:
                for pid, where in views.analysis_matches(session, words).items():
                    found.setdefault(pid, where)
        with self.db() as session:
            return views.library_rows(session, sort=sort, descending=descending, only=found)

    def paper_file(self, paper_id: str) -> tuple[Path, str]:
        """(the stored PDF whose bytes are this paper, the name the file came in with)."""
        from reader import views
        from reader.store.tables import Paper
        from reader.text.digest import sha256_bytes

        with self.db() as session:
            paper = session.get(Paper, paper_id)
            if paper is None:
                raise PaperNotFound(f"no paper with id {paper_id!r}; pick one from the library")
            if paper.source_kind != "pdf":
                raise ReaderError(f"{paper.title!r} came from a text file: there are no pages to show")
            name, source = views.paper_file_name(paper), paper.source_path
        uploads = self.settings.home / "uploads"
        for path in (Path(source), uploads / f"{paper_id}.pdf", *sorted((uploads / paper_id).glob("*.pdf"))):
            try:
                if path.is_file() and sha256_bytes(path.read_bytes()) == paper_id:
                    return path, name
            except OSError:
                continue
        raise ReaderError(f"the PDF of {name!r} is no longer at {source} (moved or deleted); "
                          "upload it again to see its pages")

    def page_image(self, paper_id: str, page: int) -> Path:
        """A PNG of one page of the paper's PDF, rendered once and kept in READER_HOME/pages."""
        from reader.ingest.pages import render_page

        cached = self.settings.home / "pages" / paper_id / f"{int(page)}.png"
        if cached.is_file():
            return cached
        pdf, _ = self.paper_file(paper_id)
        try:
            png = render_page(pdf, int(page))
        except IndexError:
            raise PaperNotFound(f"the paper has no page {page}") from None
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.{threading.get_ident()}.part")
        tmp.write_bytes(png)
        tmp.replace(cached)
        return cached

    def passage_box(self, chunk_id: int):
        """Where one passage stands on its pages -> views.PassageBox (None: no such passage).
        A paper stored before rectangles were kept gets them derived from its PDF first."""
        from reader import views

        with self.db() as session:
            box = views.passage_box(session, chunk_id)
            missing = box is not None and views.passages_without_rects(session, box.paper_id)
        if missing:
            self.derive_rects(box.paper_id)
            with self.db() as session:
                box = views.passage_box(session, chunk_id)
        return box

    def derive_rects(self, paper_id: str) -> int:
        """Store the rectangles of a paper's passages that have none, from its stored PDF
        (papers ingested before they were kept); returns how many passages got them."""
        from sqlalchemy import update

        from reader import views
        from reader.ingest.pages import passage_rects
        from reader.store.db import transaction
        from reader.store.tables import Chunk

        with self.db() as session:
            missing = views.passages_without_rects(session, paper_id)
        if not missing:
            return 0
        try:
            pdf, _ = self.paper_file(paper_id)
            found = passage_rects(pdf, [(start, end, text) for _, start, end, text in missing])
        except ReaderError:
            found = [[] for _ in missing]  # no PDF (text file, moved): stored as none
        with transaction(self.db) as session:
            for (chunk_id, *_), rects in zip(missing, found):
                session.execute(update(Chunk).where(Chunk.id == chunk_id).values(rects=rects))
        return len(missing)

    def name_paper(self, paper_id: str, file_name: str) -> None:
        """Keep the name a paper's file came in with, unless it already has a real one (the
        web page stores uploads by their sha256: that internal name is replaced)."""
        from reader.store.db import transaction
        from reader.store.tables import Paper

        with transaction(self.db) as session:
            paper = session.get(Paper, paper_id)
            if paper is not None and (not paper.file_name or paper.file_name == f"{paper_id}.pdf"):
                paper.file_name = file_name

    def delete_paper(self, paper_id: str):
        """`remove`, plus the paper's page images and its uploaded copy -> PaperInfo."""
        import shutil

        info = self.remove(paper_id)
        shutil.rmtree(self.settings.home / "pages" / info.id, ignore_errors=True)
        (self.settings.home / "uploads" / f"{info.id}.pdf").unlink(missing_ok=True)
        shutil.rmtree(self.settings.home / "uploads" / info.id, ignore_errors=True)
        return info

    def notes_zip(self) -> tuple[bytes, int]:
        """(a zip of every reviewed paper's note plus index.md, how many notes)."""
        import io
        import tempfile
        import zipfile

        with tempfile.TemporaryDirectory() as tmp:
            result = self.export(tmp)
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                for path in sorted(Path(tmp).rglob("*.md")):
                    archive.write(path, f"reader-notes/{path.relative_to(tmp)}")
        return buffer.getvalue(), len(result.notes)
