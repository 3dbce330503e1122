"""The rigour checklist as plain data: one item per thing a reviewer checks first, each with the
sentence and page it rests on, or "not found" with what was searched."""

from __future__ import annotations

from dataclasses import dataclass, field

from reader.text.pages import page_range
from reader.text.rigour import BY_KEY, ITEM_KEYS

# How an item was decided: the rules over every sentence; a quote the extraction prompt copied from
# a passage the index found (checked to be in that passage); or not found after both.
RULE, EXTRACTION, NOT_FOUND = "rule", "extraction", "not found"


@dataclass(frozen=True)
class Finding:
    """One checklist item as the critique uses it (ChecklistItem.finding(); reader.deepread.checked)."""

    key: str
    found: bool
    quote: str = ""  # the paper's sentence that states it
    value: str = ""
    kind: str = ""  # variance: spread, test or claim
    pages: str = ""  # "p. 5"
    searched: str = ""  # what was read before "not found"


@dataclass
class ChecklistItem:
    key: str
    found: bool
    value: str = ""  # a short answer: "MAP, nDCG", "5 runs", "section “Limitations”"
    quote: str = ""  # the paper's sentence (or copied span) that states it
    page_start: int | None = None
    page_end: int | None = None
    chunk_id: int | None = None  # the passage it rests on
    section: str = ""
    decided_by: str = NOT_FOUND  # rule | extraction | not found
    kind: str = ""  # variance: spread, test or claim (significance said, no test or spread)
    searched: str = ""  # what was read and searched before "not found" (or before the extraction found it)

    @property
    def label(self) -> str:
        return BY_KEY[self.key].label

    @property
    def pages(self) -> str:
        """ "p. 5" or "pp. 5–6"; "" when not found."""
        return page_range(self.page_start, self.page_end, prose=True) if self.page_start else ""

    @property
    def shown(self) -> str:
        """The item's answer in a few words: its value, or "not found"."""
        if not self.found:
            return "not found"
        return self.value or "found"

    def finding(self) -> Finding:
        """The item as the critique's sentences use it (reader.deepread.checked)."""
        return Finding(self.key, self.found, self.quote, self.value, self.kind, self.pages, self.searched)

    def to_json(self) -> dict:
        return {
            "item": self.key,
            "label": self.label,
            "found": self.found,
            "value": self.value,
            "quote": self.quote,
            "pages": page_range(self.page_start, self.page_end) if self.page_start else "",
            "chunk_id": self.chunk_id,
            "section": self.section,
            "decided_by": self.decided_by,
            "kind": self.kind,
            "searched": self.searched,
        }


@dataclass
class Checklist:
    """A paper's checklist, its items in ITEMS order. `stored`: read from the database (a deep
    read built it); otherwise made by the rules alone when asked for (a paper read before it)."""

    paper_id: str
    items: list[ChecklistItem] = field(default_factory=list)
    llm_calls: int = 0
    stored: bool = True

    def item(self, key: str) -> ChecklistItem:
        return next(i for i in self.items if i.key == key)

    @property
    def by_key(self) -> dict[str, ChecklistItem]:
        return {i.key: i for i in self.items}

    @property
    def findings(self) -> dict[str, Finding]:
        return {i.key: i.finding() for i in self.items}

    @property
    def n_found(self) -> int:
        return sum(1 for i in self.items if i.found)

    def to_json(self) -> dict:
        return {
            "paper_id": self.paper_id,
            "stored": self.stored,
            "found": self.n_found,
            "items": [i.to_json() for i in sorted(self.items, key=lambda i: ITEM_KEYS.index(i.key))],
        }
