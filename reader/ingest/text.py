"""Plain-text sources (.txt, .md) and the text rules every parser shares:
heading, caption and reference patterns, line joining, language detection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from reader.errors import IngestError
from reader.ingest.model import Block, CaptionData, ParsedPaper, ReferenceData
from reader.text.controls import clean_text
from reader.text.digest import sha256_bytes
from reader.text.tokens import CJK_CHARS

# "1 Introduction", "2.3. Results", "A Appendix", "IV. EXPERIMENTS"
NUMBERED_HEADING = re.compile(
    r"^(?:\d{1,2}(?:\.\d{1,2}){0,3}\.?|[A-H](?:\.\d{1,2}){0,2}\.?|[IVX]{1,5}\.)\s+[A-Z][^\n]{0,120}$"
)
KNOWN_HEADINGS = {
    "abstract",
    "summary",
    "introduction",
    "background",
    "related work",
    "related works",
    "method",
    "methods",
    "methodology",
    "materials and methods",
    "approach",
    "model",
    "experiments",
    "experimental setup",
    "evaluation",
    "results",
    "results and discussion",
    "discussion",
    "analysis",
    "conclusion",
    "conclusions",
    "conclusions and future work",
    "conclusion and future work",
    "future work",
    "limitations",
    "ethics statement",
    "ethical considerations",
    "acknowledgments",
    "acknowledgements",
    "acknowledgment",
    "acknowledgement",
    "references",
    "bibliography",
    "literature cited",
    "works cited",
    "appendix",
    "appendices",
    "supplementary material",
    "supporting information",
    "author contributions",
    "funding",
    "data availability",
    "competing interests",
    "keywords",
    "index terms",
}
REFERENCE_HEADINGS = {"references", "bibliography", "literature cited", "works cited", "reference"}
# Headings that end a reference list (appendices and back matter follow it).
AFTER_REFERENCES = re.compile(
    r"^(?:[A-H](?:\.\d+)*\.?\s+\S|appendi|supplementa|supporting information|author contributions"
    r"|acknowledg|funding|about the author|biograph)",
    re.I,
)
CAPTION = re.compile(
    r"^(?P<word>Figure|Fig\.?|FIGURE|FIG\.?|Table|TABLE|Tab\.)\s*"
    r"(?P<num>S?\d{1,3}[a-z]?|[IVX]{1,5})\s*(?P<sep>[.:|\u2014\u2013-]|\s{2,}|\s+(?=[A-Z(]))"
)
NUMBERED_REFERENCE = re.compile(r"^\s*(\[\d{1,3}\]|\d{1,3}\.(?=\s|$)|\(\d{1,3}\))\s*")
YEAR = re.compile(r"\b(19[5-9]\d|20[0-4]\d)\b")
_NOT_DIGIT = re.compile(r"\D")
# The section of a paper's text when no heading was found (not "Front matter": it is the body).
TEXT_SECTION = "Text"
# The numbering in front of a heading: "3.1 ", "A.2. ", "IV. "
HEADING_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[A-H](?:\.\d+)*\.?|[IVX]+\.)\s+")


def title_from_file_name(path: Path) -> str:
    """A title made from the file's name, for a paper whose text names none."""
    return " ".join(clean_text(path.stem).split())


def normalize_heading(text: str) -> str:
    """'3.1 Related Work' -> 'related work' (numbering and punctuation dropped)."""
    text = HEADING_NUMBER.sub("", text.strip())
    return re.sub(r"[^a-z ]", "", text.lower()).strip()


def is_reference_heading(text: str) -> bool:
    return normalize_heading(text) in REFERENCE_HEADINGS


def caption_label(text: str) -> tuple[str, str] | None:
    """('figure', 'Figure 2') when the text starts like a caption, else None."""
    m = CAPTION.match(text)
    if not m:
        return None
    word = m.group("word").lower()
    kind = "table" if word.startswith("tab") else "figure"
    return kind, f"{kind.capitalize()} {m.group('num')}"


_NOT_LETTER_BYTES = bytes(b for b in range(128) if not chr(b).isalpha())


def detect_language(text: str) -> str:
    """'zh' when CJK characters dominate: one CJK character carries about as
    much as a Latin word (~5 letters), so compare against letters / 5."""
    cjk = len(CJK_CHARS.findall(text))
    letters = len(text.encode("ascii", "ignore").translate(None, _NOT_LETTER_BYTES))
    return "zh" if cjk > letters / 5 else "en"


# The literal comes first and the look-behind after it, so the regex engine
# jumps from one line break to the next instead of testing every character.
_HYPHEN_BREAK = re.compile(r"-\n(?<=[A-Za-z]-\n)(?=[a-z])")
_CJK_BREAK = re.compile(
    r"\n(?<=[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]\n)(?=[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff])"
)


def join_lines(lines: list[str]) -> str:
    """Join the lines of one paragraph: drop end-of-line hyphens before a
    lower-case continuation, no space between CJK characters."""
    if len(lines) == 1:
        return lines[0].strip()
    text = "\n".join([s for s in (line.strip() for line in lines) if s])
    if "-\n" in text:
        text = _HYPHEN_BREAK.sub("", text)
    if not text.isascii():
        text = _CJK_BREAK.sub("", text)
    return text.replace("\n", " ")


def dehyphenate(text: str) -> str:
    """The same hyphen rule as join_lines, applied to raw extracted text."""
    return re.sub(r"(?<=[A-Za-z])-\n(?=[a-z])", "", text)


def _numbered_list(lines: list[tuple[str, int, bool]]) -> bool:
    """True when line-initial markers count up 1, 2, 3... (not years or volumes)."""
    numbers = []
    for text, _, _ in lines:
        m = NUMBERED_REFERENCE.match(text)
        if m:
            numbers.append(int(_NOT_DIGIT.sub("", m.group(1))))
    steps = sum(1 for a, b in zip(numbers, numbers[1:]) if b == a + 1)
    return len(numbers) >= 2 and steps >= 0.6 * (len(numbers) - 1)


def split_references(lines: list[tuple[str, int, bool]]) -> list[ReferenceData]:
    """Reference entries from (line, page, starts_entry) triples in reading order.

    Numbered lists ([12], 12., (12)) that count up split on the markers.
    Otherwise the caller's starts_entry hint (a new paragraph, or a line at the
    hanging-indent margin) decides.
    """
    use_markers = _numbered_list(lines)
    entries: list[list] = []  # [marker, page, [lines]]
    expected = 1
    for text, page, starts in lines:
        m = NUMBERED_REFERENCE.match(text) if use_markers else None
        if m and int(_NOT_DIGIT.sub("", m.group(1))) not in (1, expected, expected + 1, expected + 2):
            m = None  # a number inside an entry, e.g. a volume at the start of a line
        if m or (not use_markers and starts) or not entries:
            marker = m.group(1) if m else ""
            if m:
                expected = int(_NOT_DIGIT.sub("", marker)) + 1
            body = text[m.end() :] if m else text
            entries.append([marker, page, [body]])
        else:
            entries[-1][2].append(text)
    refs = []
    for marker, page, parts in entries:
        body = join_lines(parts)
        if len(body) >= 12 or marker:
            refs.append(ReferenceData(marker=marker, page=page, text=body))
        elif refs:
            refs[-1].text = join_lines([refs[-1].text, body])
    return refs


# A year standing alone: "2019年" and "(2017)" count, "ACE2005" and "2020YFB" do not.
_Y = r"(?<![A-Za-z\d])(19[5-9]\d|20[0-4]\d)(?![A-Za-z\d])"
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
# A keyword that starts a line or a ;/| separated part of it, or is followed by a colon.
_KEY = r"(?:(?:^|[;/|])\s*(?:{0})\b|\b(?:{0})\s*[:\uff1a])"
# Lines that date the publication: copyright, published, proceedings, a journal's
# volume line, an arXiv identifier, a line that is a date.
_PUBLISHED = [
    re.compile(p, re.I | re.M)
    for p in (
        r"(?:©|\(c\)|c\u20dd|\u24d2|\u00aa|copyright\b)[^\n]{0,20}?" + _Y,
        _KEY.format(r"published(?:\s+online)?|available\s+online|issue\s+date") + r"[^\n]{0,40}?" + _Y,
        r"^\s*(?:in\s+)?proceedings\b[^\n]{0,120}?" + _Y,
        r"^\s*(?:\d+(?:st|nd|rd|th)\s+)?(?:annual\s+)?(?:international\s+)?(?:conference|workshop|symposium)\b"
        r"[^\n]{0,100}?" + _Y,
        r"(?:出版|发表|刊出)(?:日期|时间)?\s*[:\uff1a][^\n]{0,20}?" + _Y,
        r"^[^\n]{0,80}?\b\d{1,4}\s*\(" + _Y + r"\)\s*\d",  # J. Phys.: Conf. Ser. 2188 (2022) 012011
        # Future Internet 2014, 6, 61-75; Tobacco Control 2004;13:445-447
        r"^[A-Z][\w .&:-]{1,60}?\s" + _Y + r"\s*[,;]\s*\d+\s*[,(:]",
        r"\bvol(?:ume)?\.?\s*\d+[^\n]{0,40}?" + _Y,
        r"第\s*\d+\s*[卷期][^\n]{0,40}?" + _Y,
        r"文章编号[^\n]{0,30}?[(\uff08]\s*" + _Y + r"\s*[)\uff09]",
        r"^\s*" + _Y + r"[-/]\d{1,2}[-/]\d{1,2}\s*$",
        r"^\s*(?:\d{1,2}\s+)?"
        + _MONTH
        + r"\s+(?:\d{1,2}(?:\s*[-\u2013]\s*\d{1,2})?\s*,?\s+)?"
        + _Y
        + r"\.?\s*$",
    )
]
# Manuscript dates: the year a paper was received or accepted, when nothing dates the publication.
_MANUSCRIPT = re.compile(
    _KEY.format(r"received|accepted|revised|submitted") + r"[^\n]{0,40}?" + _Y
    + r"|(?:收稿|定稿|修回|录用|接受)(?:日期|时间)\s*[:\uff1a]?[^\n]{0,20}?" + _Y,
    re.I | re.M,
)  # fmt: skip
_ARXIV_ID = re.compile(r"arXiv:\s*(\d{2})(\d{2})\.\d{4,5}", re.I)


def guess_year(text: str) -> int | None:
    """The publication year from a paper's first-page lines: the latest year on a line
    that dates the publication (copyright, published, proceedings, a journal's volume
    line, an arXiv identifier, a date line), else the latest received/accepted date,
    else None. A year cited in the text ("Smith et al., 2019") is never the paper's."""
    published = [int(m.group(m.lastindex)) for p in _PUBLISHED for m in p.finditer(text)]
    published += [2000 + int(m.group(1)) for m in _ARXIV_ID.finditer(text) if 1 <= int(m.group(2)) <= 12]
    if published:
        return max(published)
    manuscript = [int(y) for pair in _MANUSCRIPT.findall(text) for y in pair if y]
    return max(manuscript) if manuscript else None


# ---------------------------------------------------------------- .txt / .md

MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def _paragraphs(page_text: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", page_text) if p.strip()]


def _plain_heading(paragraph: str) -> str | None:
    """A one-line paragraph that reads like a section heading in plain text."""
    if "\n" in paragraph.strip() or len(paragraph) > 100:
        return None
    line = paragraph.strip().rstrip(":")
    if normalize_heading(line) in KNOWN_HEADINGS or NUMBERED_HEADING.match(line):
        return line
    return None


def decode_text(path: Path, data: bytes) -> str:
    for encoding in ("utf-8-sig", "utf-16") if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ("utf-8-sig",):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise IngestError(path, "not UTF-8 text; convert it to UTF-8 (e.g. iconv -t UTF-8) and ingest again")


@dataclass
class _TextParts:
    """A text file's paragraphs sorted by kind as they are read in order."""

    title: str = ""
    blocks: list[Block] = field(default_factory=list)
    sections: list[dict] = field(default_factory=list)
    captions: list[CaptionData] = field(default_factory=list)
    ref_lines: list[tuple[str, int, bool]] = field(default_factory=list)  # (line, page, starts a paragraph)


def parse_text(path: Path, data: bytes | None = None, sha256: str | None = None) -> ParsedPaper:
    """A .txt or .md file as a paper: pages split on form feeds, Markdown
    headings (or plain-text headings like '2 Methods') start sections; without
    any heading the text after the title is one section, TEXT_SECTION.
    `sha256` is the bytes' hash when the caller already has it."""
    path = Path(path)
    if data is None:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise IngestError(path, f"cannot read the file ({exc.strerror})") from None
    markdown = path.suffix.lower() in (".md", ".markdown")
    pages = [clean_text(page) for page in _text_of(path, data).split("\f")]
    parts = _sort_paragraphs(pages, markdown)
    blocks = parts.blocks
    if not parts.sections:  # no heading anywhere: what follows the title is the body, not front matter
        for block in blocks:
            if block.kind == "body" and not block.section:
                block.section = TEXT_SECTION
    references = split_references(parts.ref_lines)
    blocks += [
        Block(r.text if not r.marker else f"{r.marker} {r.text}", r.page, "References", "reference")
        for r in references
    ]
    full = "\n".join(b.text for b in blocks)
    return ParsedPaper(
        sha256=sha256 or sha256_bytes(data),
        source_path=str(path),
        source_kind="md" if markdown else "txt",
        title=parts.title or title_from_file_name(path),
        authors=[],
        year=guess_year(full[:3000]),
        abstract=" ".join(b.text for b in blocks if b.kind == "abstract"),
        pages=len(pages),
        language=detect_language(full),
        blocks=blocks,
        sections=parts.sections,
        captions=parts.captions,
        references=references,
    )


def _text_of(path: Path, data: bytes) -> str:
    """The file's text with Unix line ends; IngestError for binary data or an empty file."""
    if b"\x00" in data[:4096] and data[:2] not in (b"\xff\xfe", b"\xfe\xff"):
        raise IngestError(path, "binary data, not a text file")
    text = decode_text(path, data).replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise IngestError(path, "empty text file (nothing to read)")
    return text


def _sort_paragraphs(pages: list[str], markdown: bool) -> _TextParts:
    """Each paragraph as the title, a heading, reference lines, a caption, the abstract or body
    text."""
    parts = _TextParts()
    section = ""
    in_refs = False
    for page_no, page_text in enumerate(pages, start=1):
        for para in _paragraphs(page_text):
            md = MD_HEADING.match(para.strip()) if markdown else None
            heading = md.group(2).strip() if md else _plain_heading(para)
            if md and not parts.title and len(md.group(1)) == 1:
                parts.title = heading
                parts.blocks.append(Block(heading, page_no, "", "title"))
                continue
            if heading:
                section = heading
                in_refs = is_reference_heading(heading) or (in_refs and not AFTER_REFERENCES.match(heading))
                parts.sections.append({"title": heading, "page": page_no})
                parts.blocks.append(Block(heading, page_no, section, "heading"))
                continue
            if in_refs:
                lines = [ln for ln in para.split("\n") if ln.strip()]
                parts.ref_lines += [(ln.strip(), page_no, i == 0) for i, ln in enumerate(lines)]
                continue
            body = join_lines(para.split("\n"))
            label = caption_label(body)
            if label:
                parts.captions.append(CaptionData(label[0], label[1], page_no, body))
                parts.blocks.append(Block(body, page_no, f"{label[1]} caption", "caption"))
                continue
            if not parts.title:
                parts.title = body[:200] if len(body) <= 200 else body[:120].rsplit(" ", 1)[0] + "…"
                if len(body) <= 200:
                    parts.blocks.append(Block(body, page_no, "", "title"))
                    continue
            kind = "abstract" if normalize_heading(section) == "abstract" else "body"
            parts.blocks.append(Block(body, page_no, section, kind))
    return parts
