"""ParsedPaper -> passages of a few hundred tokens for evidence search.

Body text is packed section by section, paragraph by paragraph (long
paragraphs by sentence), with a tail of the previous passage repeated at the
start of the next so a claim that straddles a boundary is still found whole.
A section too small to stand alone joins the next one when that is its
subsection ("3 Experiments" with one line, then "3.1 Data") or when it has
no text but its heading; a short section of its own ("4 Limitations" before
"5 Conclusion") stands alone, under its name. Every caption is its own passage, labelled
"Figure 2 caption"; reference entries are packed into "References" passages
without overlap and never cut in the middle.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from reader.ingest.model import Block, ChunkData, ParsedPaper
from reader.ingest.text import is_reference_heading
from reader.text.tokens import estimate_tokens

_SENTENCE_END = re.compile(r"(?<=[.!?;。！？；])\s+(?=[A-Z0-9(\[\"“\u4e00-\u9fff])|(?<=[。！？；])")


@dataclass
class _Piece:
    text: str
    page: int
    tokens: int
    starts_paragraph: bool


@dataclass
class _Run:
    section: str
    pieces: list[_Piece]
    position: int
    has_text: bool = False  # more than its heading

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in self.pieces)


_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)*)\b")


def _is_subsection(title: str, parent: str) -> bool:
    """ "3.1 Data" under "3 Experiments"; unnumbered headings are taken to be."""
    child_number, parent_number = _NUMBER.match(title), _NUMBER.match(parent)
    if not child_number or not parent_number:
        return True
    return child_number.group(1).startswith(parent_number.group(1) + ".")


def _split_long(text: str, max_tokens: int) -> list[str]:
    """Sentences, and word windows for a 'sentence' longer than max_tokens
    (tables and formulas have no sentence ends)."""
    out: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        if not sentence:
            continue
        if estimate_tokens(sentence) <= max_tokens:
            out.append(sentence)
            continue
        words = sentence.split(" ")
        window: list[str] = []
        for word in words:
            window.append(word)
            if estimate_tokens(" ".join(window)) >= max_tokens:
                out.append(" ".join(window))
                window = []
        if window:
            out.append(" ".join(window))
    return out


def _pieces(block: Block, target: int) -> list[_Piece]:
    tokens = estimate_tokens(block.text)
    if tokens <= target:
        return [_Piece(block.text, block.page, tokens, True)]
    parts = _split_long(block.text, target)
    return [_Piece(t, block.page, estimate_tokens(t), i == 0) for i, t in enumerate(parts)]


def _join(pieces: list[_Piece]) -> str:
    out = ""
    for p in pieces:
        if not out:
            out = p.text
        else:
            out += ("\n" if p.starts_paragraph else " ") + p.text
    return out


def _overlap(pieces: list[_Piece], overlap: int) -> list[_Piece]:
    """The tail of a passage, about `overlap` tokens, in whole sentences when
    they fit, else the last words of the final sentence."""
    tail: list[_Piece] = []
    total = 0
    for p in reversed(pieces):
        if total + p.tokens > overlap:
            break
        tail.insert(0, p)
        total += p.tokens
    if not tail and pieces and overlap > 0:
        last = pieces[-1]
        words = last.text.split(" ")
        keep = max(1, min(len(words) - 1, overlap * 3 // 4))
        text = " ".join(words[-keep:])
        tail = [_Piece(text, last.page, estimate_tokens(text), True)]
    return [_Piece(p.text, p.page, p.tokens, p.starts_paragraph or i == 0) for i, p in enumerate(tail)]


def _pack(pieces: list[_Piece], target: int, overlap: int) -> list[list[_Piece]]:
    chunks: list[list[_Piece]] = []
    current: list[_Piece] = []
    fresh = 0  # tokens in `current` that are not overlap from the previous chunk
    size = 0  # tokens in `current`
    for piece in pieces:
        # a passage holding just a heading or one short sentence is not worth
        # its own row: let it run over the target instead
        if current and fresh >= target // 4 and size + piece.tokens > target:
            chunks.append(current)
            current = _overlap(current, overlap) if overlap else []
            size = sum(p.tokens for p in current)
            fresh = 0
        current.append(piece)
        fresh += piece.tokens
        size += piece.tokens
    if current and fresh:
        chunks.append(current)
    return chunks


@dataclass
class _Sorted:
    """A paper's blocks sorted for chunking."""

    runs: list[_Run] = field(default_factory=list)  # the text of each section in turn
    singles: list[tuple[int, str, list[_Piece]]] = field(default_factory=list)  # captions, packed alone
    references: list[Block] = field(default_factory=list)  # the list's heading first, then its entries
    ref_position: int = 0  # where the first reference stands among the blocks


def chunk_paper(parsed: ParsedPaper, target_tokens: int = 300, overlap_tokens: int = 50) -> list[ChunkData]:
    blocks = _sort_blocks(parsed.blocks, target_tokens)
    groups: list[tuple[int, str, list[_Piece]]] = []
    for run in _merge_short_runs(blocks.runs, target_tokens):
        for pieces in _pack(run.pieces, target_tokens, overlap_tokens):
            groups.append((run.position, run.section, pieces))
    for pieces in _pack([p for b in blocks.references for p in _pieces(b, target_tokens)], target_tokens, 0):
        groups.append((blocks.ref_position, "References", pieces))
    groups += blocks.singles
    groups.sort(key=lambda g: g[0])  # stable: passages of one run keep their order
    return [_chunk(ordinal, section, pieces) for ordinal, (_, section, pieces) in enumerate(groups)]


def _sort_blocks(blocks: list[Block], target_tokens: int) -> _Sorted:
    result = _Sorted()
    ref_heading: Block | None = None
    for position, block in enumerate(blocks):
        if not block.text.strip():
            continue
        if block.kind == "caption":
            for pieces in _pack(_pieces(block, target_tokens), target_tokens, 0):
                result.singles.append((position, block.section, pieces))
            continue
        if block.kind == "heading" and is_reference_heading(block.text):
            ref_heading = block
            continue
        if block.kind == "reference":
            result.ref_position = result.ref_position or position
            result.references.append(block)
            continue
        label = block.section if block.kind != "title" and block.section else "Front matter"
        if not result.runs or result.runs[-1].section != label:
            result.runs.append(_Run(label, [], position))
        result.runs[-1].pieces += _pieces(block, target_tokens)
        result.runs[-1].has_text |= block.kind != "heading"
    if result.references and ref_heading is not None:
        result.references.insert(0, ref_heading)
    return result


def _merge_short_runs(runs: list[_Run], target_tokens: int) -> list[_Run]:
    """A run under a quarter of the target joins the next one when it holds nothing but its
    heading or the next is one of its subsections."""
    merged: list[_Run] = []
    carry: _Run | None = None
    for i, run in enumerate(runs):
        following = runs[i + 1] if i + 1 < len(runs) else None
        if carry is not None:
            run = _Run(run.section, carry.pieces + run.pieces, carry.position, run.has_text)
            carry = None
        joins = following is not None and (not run.has_text or _is_subsection(following.section, run.section))
        if run.tokens < target_tokens // 4 and joins:
            carry = run
            continue
        merged.append(run)
    if carry is not None:
        merged.append(carry)
    return merged


def _chunk(ordinal: int, section: str, pieces: list[_Piece]) -> ChunkData:
    text = _join(pieces)
    pages = [p.page for p in pieces]
    return ChunkData(
        ordinal=ordinal,
        section=section,
        page_start=min(pages),
        page_end=max(pages),
        text=text,
        n_tokens=estimate_tokens(text),
    )
