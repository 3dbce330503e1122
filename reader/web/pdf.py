"""The PDF beside the analyses: the stored file of a paper, its pages as images (rendered
once, kept in READER_HOME/pages) and where each passage stands on its pages.

A page is rendered in a child process: MuPDF holds Python's lock while it renders, so in the
server's own threads one slow page (a 1 MB PDF of long strokes takes a minute) stalled every
other request. RENDER_WORKERS processes, started as needed and kept (starting one loads
pymupdf, about a second), each render one page at a time within RENDER_MEMORY_BYTES of
memory; one that takes over RENDER_TIMEOUT_S is killed and replaced. The same workers read
a paper's words and their places (the page's text layer and search, reader/web/page_text.py).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from reader.errors import PaperNotFound, ReaderError, describe_error
from reader.ingest.pages import RENDER_ZOOM, page_words, passage_rects, render_page
from reader.store.tables import Chunk, Paper
from reader.text.digest import sha256_bytes
from reader.web.library import paper_file_name


@dataclass
class PassageBox:
    """Where one passage stands: its first page and its rectangles (fractions of the page)."""

    chunk_id: int
    paper_id: str
    page: int
    page_end: int
    section: str
    rects: list  # [[page, x0, y0, x1, y1], ...]

    def to_json(self) -> dict:
        return dict(self.__dict__)


def passages_without_rects(session: Session, paper_id: str) -> list[tuple[int, int, int, str]]:
    """(chunk id, page_start, page_end, text) of a paper's passages stored before rectangles were kept."""
    return [
        tuple(r)
        for r in session.execute(
            select(Chunk.id, Chunk.page_start, Chunk.page_end, Chunk.text)
            .where(Chunk.paper_id == paper_id, Chunk.rects.is_(None))
            .order_by(Chunk.ordinal)
        )
    ]


def _stored_box(session: Session, chunk_id: int) -> PassageBox | None:
    chunk = session.get(Chunk, chunk_id)
    if chunk is None:
        return None
    rects = list(chunk.rects or [])
    return PassageBox(
        chunk_id=chunk.id,
        paper_id=chunk.paper_id,
        page=rects[0][0] if rects else chunk.page_start,
        page_end=chunk.page_end,
        section=chunk.section or "",
        rects=rects,
    )


def paper_file(library, paper_id: str) -> tuple[Path, str]:
    """(the stored PDF whose bytes are this paper, the name the file came in with)."""
    with library.reading() as session:
        paper = session.get(Paper, paper_id)
        if paper is None:
            raise PaperNotFound(f"no paper with id {paper_id!r}; pick one from the library")
        if paper.source_kind != "pdf":
            raise ReaderError(f"{paper.title!r} came from a text file: there are no pages to show")
        name, source = paper_file_name(paper), paper.source_path
    uploads = library.home / "uploads"
    for path in (Path(source), uploads / f"{paper_id}.pdf", *sorted((uploads / paper_id).glob("*.pdf"))):
        try:
            if path.is_file() and sha256_bytes(path.read_bytes()) == paper_id:
                return path, name
        except OSError:
            continue
    raise ReaderError(
        f"the PDF of {name!r} is no longer at {source} (moved or deleted); upload it again to see its pages"
    )


RENDER_TIMEOUT_S = 20.0
RENDER_MEMORY_BYTES = 1024**3  # more than the worker's own size at start
RENDER_WORKERS = 2

_free_workers: list = []  # (process, connection) pairs waiting for a page
_worker_slots = threading.BoundedSemaphore(RENDER_WORKERS)
_workers_lock = threading.Lock()


def _start_worker():
    """A render worker, once it has loaded pymupdf; None if it did not within RENDER_TIMEOUT_S."""
    context = multiprocessing.get_context("spawn")  # not fork: the server has threads
    ours, theirs = context.Pipe()
    process = context.Process(target=_render_pages, args=(theirs,), name="reader-render", daemon=True)
    process.start()
    theirs.close()
    try:
        if ours.poll(RENDER_TIMEOUT_S) and ours.recv() == ("ready", ""):
            return process, ours
    except (EOFError, OSError):
        pass
    ours.close()
    process.kill()
    process.join()
    return None


def start_renderer() -> None:
    """Start a render worker (about a second: it loads pymupdf) unless one is free, so that
    the first page image does not wait for it."""
    with _workers_lock:
        if _free_workers:
            return
    worker = _start_worker()
    with _workers_lock:
        if worker is not None:
            _free_workers.append(worker)


def _limit_memory() -> None:
    import resource

    try:
        with open("/proc/self/status") as status:
            kb = next(int(line.split()[1]) for line in status if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError):
        return  # not Linux: no limit
    limit = kb * 1024 + RENDER_MEMORY_BYTES
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _render_pages(connection) -> None:
    """A render worker's loop: ("png", pdf path, page) in, ("png", bytes) out, or ("words", pdf
    path, 0) in, ("words", reader.ingest.pages.page_words) out; ("no page", "") | ("failed",
    reason) when not, until the server closes the connection."""
    import pymupdf

    _limit_memory()
    connection.send(("ready", ""))
    while True:
        try:
            what, pdf, page, scale = connection.recv()
        except EOFError:
            return
        try:
            reply = (
                ("words", page_words(Path(pdf)))
                if what == "words"
                else ("png", render_page(Path(pdf), page, scale))
            )
        except IndexError:
            reply = ("no page", "")
        except Exception as exc:  # MuPDF's own errors, MemoryError: as text (they may not unpickle)
            reply = ("failed", describe_error(exc))
        pymupdf.TOOLS.store_shrink(100)  # MuPDF's cache of the document: not kept between pages
        connection.send(reply)


def _in_child(what: str, pdf: Path, page: int, scale: float = RENDER_ZOOM):
    """(kind, value) from a render worker for ("png" | "words", pdf, page); kind "slow" when it
    took over RENDER_TIMEOUT_S, "failed" when the worker did not start or stopped."""
    with _worker_slots:
        with _workers_lock:
            worker = _free_workers.pop() if _free_workers else None
        worker = worker or _start_worker()
        if worker is None:
            return "failed", "the renderer did not start; try again"
        process, connection = worker
        try:
            connection.send((what, str(pdf), page, scale))
            kind, value = connection.recv() if connection.poll(RENDER_TIMEOUT_S) else ("slow", "")
        except (EOFError, OSError):  # the worker died: killed for memory, or MuPDF crashed
            kind, value = "failed", "the renderer stopped"
        with _workers_lock:
            keep = kind in ("png", "words", "no page") and len(_free_workers) < RENDER_WORKERS
            if keep:
                _free_workers.append(worker)
        if not keep:
            connection.close()
            process.kill()
            process.join()
    return kind, value


def render_in_child(pdf: Path, page: int, scale: float = RENDER_ZOOM) -> bytes:
    """Page `page` of `pdf` as a PNG at `scale`, rendered by a render worker (see the module
    docstring)."""
    kind, value = _in_child("png", pdf, page, scale)
    if kind == "png":
        return value
    if kind == "no page":
        raise PaperNotFound(f"the paper has no page {page}")
    if kind == "slow":
        raise ReaderError(
            f"page {page} took longer than {RENDER_TIMEOUT_S:g} s to render and was stopped; "
            f"open the PDF itself to see it"
        )
    raise ReaderError(f"page {page} could not be rendered ({value}); open the PDF itself to see it")


def words_in_child(pdf: Path) -> list[dict]:
    """Every page's words and their places (reader.ingest.pages.page_words), read by a render
    worker, within its memory and RENDER_TIMEOUT_S."""
    kind, value = _in_child("words", pdf, 0)
    if kind == "words":
        return value
    if kind == "slow":
        raise ReaderError(
            f"reading the words of {pdf.name} took longer than {RENDER_TIMEOUT_S:g} s and was stopped; "
            f"the pages show without selectable text or search"
        )
    raise ReaderError(f"the words of {pdf.name} could not be read ({value}); the pages show without them")


# the scales (times 72 dpi) a page is rendered at: the first for the page as it opens, the others
# for a page zoomed in or shown on a screen of 2 or 3 device pixels a pixel (viewer.js asks for
# the least that is sharp); reader.ingest.pages.render_zoom keeps each within MAX_RENDER_PIXELS
RENDER_SCALES = (RENDER_ZOOM, 2.0, 3.0, 4.0)


def render_scale(asked: float) -> float:
    """The render scale for `asked`: the least of RENDER_SCALES at or above it (the largest
    for more)."""
    return next((s for s in RENDER_SCALES if s >= asked), RENDER_SCALES[-1])


def page_image(library, paper_id: str, page: int, scale: float = RENDER_ZOOM) -> Path:
    """A PNG of one page of the paper's PDF at `scale` (one of RENDER_SCALES), rendered once
    (in a child process) and kept in READER_HOME/pages."""
    scale = render_scale(scale)
    name = f"{int(page)}.png" if scale == RENDER_ZOOM else f"{int(page)}@{scale:g}.png"
    cached = library.home / "pages" / paper_id / name
    if cached.is_file():
        return cached
    pdf, _ = paper_file(library, paper_id)
    png = render_in_child(pdf, int(page), scale)
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(f".{os.getpid()}.{threading.get_ident()}.part")
    tmp.write_bytes(png)
    tmp.replace(cached)
    return cached


def passage_text(library, chunk_id: int) -> str:
    with library.reading() as session:
        chunk = session.get(Chunk, chunk_id)
        return chunk.text if chunk is not None else ""


def passage_box(library, chunk_id: int) -> PassageBox | None:
    """Where one passage stands on its pages (None: no such passage). A paper stored before
    rectangles were kept gets them derived from its PDF first."""
    with library.reading() as session:
        box = _stored_box(session, chunk_id)
        missing = box is not None and passages_without_rects(session, box.paper_id)
    if missing:
        derive_rects(library, box.paper_id)
        with library.reading() as session:
            box = _stored_box(session, chunk_id)
    return box


def derive_rects(library, paper_id: str) -> int:
    """Store the rectangles of a paper's passages that have none, from its stored PDF
    (papers ingested before they were kept); returns how many passages got them."""
    with library.reading() as session:
        missing = passages_without_rects(session, paper_id)
    if not missing:
        return 0
    try:
        pdf, _ = paper_file(library, paper_id)
        found = passage_rects(pdf, [(start, end, text) for _, start, end, text in missing])
    except ReaderError:
        found = [[] for _ in missing]  # no PDF (text file, moved): stored as none
    with library.writing() as session:
        for (chunk_id, *_), rects in zip(missing, found):
            session.execute(update(Chunk).where(Chunk.id == chunk_id).values(rects=rects))
    return len(missing)
