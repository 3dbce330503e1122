"""A paper's figures beside its note: one PNG file per figure, and the note's "Figures" section.

`<note stem>-figure-3.png` holds Figure 3's picture as ingest rendered it from the PDF
(reader/ingest/figures.py), next to `<note stem>.md`. The note lists each figure with its page
and caption and shows its picture as a Markdown image (Obsidian shows it too). `reader figures`
writes the same files without the note (`FigureFiles`).
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from reader.errors import ReaderError
from reader.export.markdown import escape_inline, note_file_name, quote
from reader.text.figures import Figure

_NOT_NAME = re.compile(r"[^\w]+", re.UNICODE)


def figure_file_name(note_file_name: str, figure: Figure, ordinal: int) -> str:
    """ "<note stem>-figure-3.png" ("-figure-N" from the figure's place where its label has none)."""
    stem = note_file_name.removesuffix(".md")
    label = _NOT_NAME.sub("-", (figure.label or "").lower()).strip("-") or f"figure-{ordinal + 1}"
    return f"{stem}-{label}.png"


def figures_section(note_file_name: str, figures: list[Figure]) -> str:
    """The note's "Figures" section ("" for a paper without figures)."""
    if not figures:
        return ""
    lines = ["", "## Figures", ""]
    for i, figure in enumerate(figures):
        name = figure_file_name(note_file_name, figure, i)
        label = escape_inline(figure.label or f"Figure {i + 1}")
        caption = escape_inline(quote(figure.caption or ""))
        lines += [f"**{label}** (p. {figure.page}): {caption}", "", f"![{label}]({name})", ""]
    return "\n".join(lines)


def write_bytes_atomically(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=path.suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_figures(out_dir: Path, note_file_name: str, figures: list[Figure]) -> list[Path]:
    """Write each figure's PNG file beside the note; the paths written."""
    paths = []
    for i, figure in enumerate(figures):
        if not figure.png:
            continue
        path = out_dir / figure_file_name(note_file_name, figure, i)
        write_bytes_atomically(path, figure.png)
        paths.append(path)
    return paths


@dataclass
class FigureFiles:
    """A paper's figures written out (`reader figures`): each figure with its file."""

    paper_id: str
    title: str
    out_dir: Path
    figures: list[dict] = field(default_factory=list)  # Figure.to_json() with "file"

    def to_json(self) -> dict:
        return {
            "paper_id": self.paper_id,
            "title": self.title,
            "out_dir": str(self.out_dir),
            "figures": self.figures,
        }


def export_figures(paper_id: str, title: str, figures: list[Figure], out_dir: Path) -> FigureFiles:
    """Write the paper's figures into `out_dir` (made if missing) under the names its note uses."""
    out_dir = Path(out_dir).expanduser()
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReaderError(f"{out_dir}: cannot create the output folder ({exc.strerror})") from exc
    name = note_file_name(title, paper_id)
    paths = write_figures(out_dir, name, figures)
    written = {p.name: p for p in paths}
    listed = []
    for i, figure in enumerate(figures):
        path = written.get(figure_file_name(name, figure, i))
        listed.append({**figure.to_json(), "file": str(path) if path else None})
    return FigureFiles(paper_id, title, out_dir, listed)
