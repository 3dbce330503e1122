"""A paper's figure as plain data, and the figures a sentence cites (a leaf).

A figure is its label ("Figure 3"), caption, page, rectangle on the page (fractions of the page,
as passage and table rectangles are), how its picture was found (reader/ingest/figures.py) and
the picture itself as PNG bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# "Figure 3", "Fig. 3", "Figs. 2 and 3", "Figures 2–4", "Fig 3b"; S3 is a supplement's figure
_CITED = re.compile(
    r"\b(?:Figures?|Figs?\.?|FIGURES?|FIGS?\.?)\s*(?P<list>S?\d{1,3}[a-z]?"
    r"(?:\s*(?:,|and|&|[\u2013\u2014-]|to)\s*S?\d{1,3}[a-z]?)*)"
)
_ONE = re.compile(r"(S?)(\d{1,3})[a-z]?")
_RANGE = re.compile(r"^(S?\d{1,3})[a-z]?\s*(?:[\u2013\u2014-]|to)\s*(S?\d{1,3})[a-z]?$")


@dataclass
class Figure:
    """A figure of a paper. Pages are 1-based; `rect` is [x0, y0, x1, y1] as fractions of the page.
    `method`: image (the PDF's embedded image or images next to the caption), drawing (its vector
    drawings), text (a figure set as text) or region (no picture found: the page's region next to
    the caption, rendered)."""

    label: str  # "Figure 3"
    caption: str
    page: int
    rect: list[float]
    method: str
    png: bytes = field(default=b"", repr=False)

    @property
    def number(self) -> str:
        """ "3" of "Figure 3" ("S2" of "Figure S2")."""
        return self.label.split()[-1] if self.label else ""

    def to_json(self) -> dict:
        """Everything but the picture's bytes (their size instead)."""
        return {
            "label": self.label,
            "caption": self.caption,
            "page": self.page,
            "rect": list(self.rect),
            "method": self.method,
            "png_bytes": len(self.png),
        }


def cited_figures(sentence: str) -> list[str]:
    """The figure numbers a sentence cites, in order, once each: "Figs. 2 and 3" -> ["2", "3"],
    "Figures 2–4" -> ["2", "3", "4"]; "Figure 3b" -> ["3"]."""
    out: list[str] = []
    for m in _CITED.finditer(sentence):
        for part in re.split(r"\s*(?:,|and|&)\s*", m.group("list")):
            out += _numbers(part.strip())
    return list(dict.fromkeys(out))


def _numbers(part: str) -> list[str]:
    span = _RANGE.match(part)
    if span and not span.group(1).startswith("S") and not span.group(2).startswith("S"):
        lo, hi = int(span.group(1)), int(span.group(2))
        if 0 < hi - lo <= 20:
            return [str(n) for n in range(lo, hi + 1)]
    return [m.group(1) + str(int(m.group(2))) for m in _ONE.finditer(part)]
