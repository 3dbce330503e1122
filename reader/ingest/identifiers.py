"""What `reader import` is given, as plain records: a DOI, an arXiv id or URL, or a RIS or BibTeX
file of entries (each with what it says: title, authors, year, DOI, arXiv id, abstract, a local PDF).

    parse_identifier("10.18653/v1/2020.acl-main.207")  -> Record(doi=...)
    parse_identifier("https://arxiv.org/abs/1706.03762v7")  -> Record(arxiv="1706.03762v7")
    read_bibfile(Path("library.bib"))  -> [Record, ...]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from reader.errors import ReaderError
from reader.ingest.pages import find_doi
from reader.text.controls import clean_text

_ARXIV_NEW = re.compile(r"(?<![\w.])(\d{4}\.\d{4,5}(?:v\d+)?)(?![\w.])")
_ARXIV_OLD = re.compile(r"(?<![\w.])([a-z\-]+(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?)(?![\w.])")
BIB_SUFFIXES = (".bib", ".bibtex", ".ris")


@dataclass
class Record:
    """One paper to import: what is known of it, and where it came from (`source`)."""

    source: str
    title: str = ""
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    doi: str | None = None
    arxiv: str | None = None
    abstract: str = ""
    file: Path | None = None  # a PDF on this machine (a BibTeX `file` field, RIS `L1`)
    pdf_url: str = ""  # an open-access PDF, once a service named one

    @property
    def name(self) -> str:
        return self.doi or (f"arXiv:{self.arxiv}" if self.arxiv else "") or self.title[:60] or self.source


def arxiv_id(text: str) -> str | None:
    """The arXiv id in an identifier or URL ("arXiv:1706.03762", "arxiv.org/pdf/1706.03762v7.pdf")."""
    text = (text or "").strip()
    if not re.search(r"arxiv", text, re.I) and not _ARXIV_NEW.fullmatch(text):
        return None
    found = _ARXIV_NEW.search(text) or _ARXIV_OLD.search(text)
    return found.group(1) if found else None


def parse_identifier(text: str) -> Record:
    """A record for a DOI (bare, doi:, or a doi.org URL) or an arXiv id or URL; ReaderError otherwise."""
    raw = (text or "").strip()
    arxiv = arxiv_id(raw)
    if arxiv:
        return Record(source=raw, arxiv=arxiv)
    doi = find_doi([raw])
    if doi:
        return Record(source=raw, doi=doi)
    raise ReaderError(
        f"{raw!r}: not a DOI (10.xxxx/…), an arXiv id or URL (arXiv:1706.03762), or a .bib/.ris file; "
        "give one of those"
    )


def _year(value: str) -> int | None:
    found = re.search(r"\b(1[5-9]\d\d|20\d\d)\b", value or "")
    return int(found.group(1)) if found else None


def _bib_value(text: str, start: int) -> tuple[str, int]:
    """A BibTeX field's value from `start` (after "="): braced, quoted or bare; and where it ends."""
    while start < len(text) and text[start].isspace():
        start += 1
    if start < len(text) and text[start] == "{":
        depth, at = 0, start
        while at < len(text):
            depth += {"{": 1, "}": -1}.get(text[at], 0)
            if depth == 0:
                return text[start + 1 : at], at + 1
            at += 1
        return text[start + 1 :], len(text)
    if start < len(text) and text[start] == '"':
        end = text.find('"', start + 1)
        end = len(text) if end < 0 else end
        return text[start + 1 : end], end + 1
    found = re.match(r"[^,}\s]*", text[start:])
    return found.group(0), start + found.end()


def _flat(value: str) -> str:
    return clean_text(" ".join(value.replace("{", "").replace("}", "").split()))


def parse_bibtex(text: str, source: str, folder: Path) -> list[Record]:
    records = []
    for entry in re.finditer(r"@(\w+)\s*\{\s*([^,\s]*)\s*,", text):
        if entry.group(1).lower() in ("comment", "string", "preamble"):
            continue
        fields: dict[str, str] = {}
        at = entry.end()
        while True:
            name = re.match(r"\s*(\w[\w\-]*)\s*=", text[at:])
            if not name:
                break
            value, at = _bib_value(text, at + name.end())
            fields[name.group(1).lower()] = value
            comma = re.match(r"\s*,", text[at:])
            if not comma:
                break
            at += comma.end()
        record = Record(
            source=f"{source}: {entry.group(2) or entry.group(1)}",
            title=_flat(fields.get("title", "")),
            authors=[_flat(a) for a in re.split(r"\s+and\s+", fields.get("author", "")) if a.strip()],
            year=_year(fields.get("year", "") or fields.get("date", "")),
            doi=find_doi([fields.get("doi", "")]),
            arxiv=arxiv_id(fields.get("eprint", ""))
            if "arxiv" in fields.get("archiveprefix", "arxiv").lower()
            else None,
            abstract=_flat(fields.get("abstract", "")),
            file=_local_pdf(fields.get("file", ""), folder),
        )
        records.append(record)
    return records


def _local_pdf(value: str, folder: Path) -> Path | None:
    """A PDF named by a `file` field (JabRef "desc:path:type", Zotero "path"; relative to the file)."""
    for part in re.split(r"[;]", value or ""):
        pieces = part.split(":")
        candidates = [part] + [":".join(pieces[1:-1])] if len(pieces) >= 3 else [part]
        for candidate in candidates:
            candidate = candidate.strip()
            if candidate.lower().endswith(".pdf"):
                path = Path(candidate).expanduser()
                path = path if path.is_absolute() else folder / path
                if path.is_file():
                    return path
    return None


def parse_ris(text: str, source: str, folder: Path) -> list[Record]:
    records, tags = [], {}
    for line in text.splitlines():
        found = re.match(r"^([A-Z][A-Z0-9])  - ?(.*)$", line)
        if not found:
            continue
        tag, value = found.group(1), found.group(2).strip()
        if tag == "ER":
            records.append(_ris_record(tags, source, folder, len(records) + 1))
            tags = {}
        else:
            tags.setdefault(tag, []).append(value)
    if tags:
        records.append(_ris_record(tags, source, folder, len(records) + 1))
    return records


def _ris_record(tags: dict, source: str, folder: Path, n: int) -> Record:
    first = lambda *names: next((tags[t][0] for t in names if tags.get(t)), "")  # noqa: E731
    files = [v for t in ("L1", "UR") for v in tags.get(t, []) if v.lower().endswith(".pdf")]
    url = first("UR")
    return Record(
        source=f"{source}: entry {n}",
        title=_flat(first("TI", "T1")),
        authors=[_flat(a) for t in ("AU", "A1") for a in tags.get(t, [])],
        year=_year(first("PY", "Y1", "DA")),
        doi=find_doi([first("DO")]) or (find_doi([url]) if "doi" in url else None),
        arxiv=arxiv_id(url),
        abstract=_flat(first("AB", "N2")),
        file=next((p for p in (_local_pdf(f.removeprefix("file://"), folder) for f in files) if p), None),
    )


def read_bibfile(path: Path) -> list[Record]:
    """The entries of a BibTeX (.bib) or RIS (.ris) file; ReaderError naming the file otherwise."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReaderError(f"{path}: cannot read it as UTF-8 text ({exc}); export it again as UTF-8") from None
    records = (
        parse_ris(text, path.name, path.parent)
        if path.suffix.lower() == ".ris"
        else parse_bibtex(text, path.name, path.parent)
    )
    if not records:
        kind = "RIS (TY  - … ER  -)" if path.suffix.lower() == ".ris" else "BibTeX (@article{…})"
        raise ReaderError(f"{path}: no {kind} entries in it; export the references again in that format")
    return records


def records_for(item: str) -> list[Record]:
    """What one argument of `reader import` names: a .bib/.ris file's entries, or one identifier."""
    path = Path(item).expanduser()
    if path.suffix.lower() in BIB_SUFFIXES:
        if not path.is_file():
            raise ReaderError(f"{path}: no such file; give the path of the exported .bib or .ris file")
        return read_bibfile(path)
    return [parse_identifier(item)]
