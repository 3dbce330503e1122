"""Build a paper's rigour checklist: the rules over every sentence first (reader.text.rigour_find);
for an item they do not find, the paper's index is searched with the item's query, and where a
passage it finds uses the item's words, the LLM is asked the item's question over those passages
(reader.checklist.extract). An item is "not found" only after all three, and says what was read.

    build_checklist(paper_id, title, passages, search=search, llm=verifier) -> Checklist
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from reader.checklist.extract import ask, is_none, located
from reader.checklist.model import EXTRACTION, NOT_FOUND, RULE, Checklist, ChecklistItem
from reader.errors import ReaderError
from reader.text.pages import page_range
from reader.text.rigour import BY_KEY, ITEM_KEYS, Found, Passage, paper_sentences, short
from reader.text.rigour_find import CUES, find_all

SEARCH_TOP = 3  # passages the index gives for an item's query
CUED_SENTENCES = 3  # of each passage: the sentences with the item's words, shown to the LLM
# At most this many extraction calls a paper (a call of the embedded model on two cores takes
# several seconds): the items whose absence the critique would state are asked first.
MAX_EXTRACTIONS = 6
ASKED_FIRST = ("variance", "baselines", "limitations", "runs", "ablations", "code", "ethics",
               "hyperparameters", "compute", "data", "datasets", "metrics", "contributions")  # fmt: skip

Search = Callable[[str, str], list]


def _from_rule(key: str, found: Found) -> ChecklistItem:
    passage = found.sentence.passage
    return ChecklistItem(
        key,
        True,
        value=found.value,
        quote=found.sentence.text,
        page_start=passage.page_start,
        page_end=passage.page_end,
        chunk_id=passage.chunk_id,
        section=passage.section,
        decided_by=RULE,
        kind=found.kind,
    )


def _searched(key: str, paper_id: str, search: Search | None) -> tuple[list[Passage], str]:
    """The passages the index finds for the item's query, and where they are, in words."""
    if search is None:
        return [], ""
    query = BY_KEY[key].query
    try:
        hits = sorted(search(query, paper_id), key=lambda h: h.score, reverse=True)[:SEARCH_TOP]
    except Exception as exc:  # a broken index must not lose the checklist: the rules stand
        return [], f"the index could not be searched ({type(exc).__name__})"
    passages = [
        Passage(h.text, getattr(h, "section", "") or "", h.page_start, h.page_end, h.chunk_id) for h in hits
    ]
    where = ", ".join(page_range(p.page_start, p.page_end, prose=True) for p in passages) or "nothing"
    return passages, f"the index searched for “{query}” (top {SEARCH_TOP}: {where})"


def _cued(key: str, passages: list[Passage]) -> list[Passage]:
    """Each passage cut to its sentences with the item's words (at most CUED_SENTENCES); passages
    without any are left out."""
    out = []
    for p in passages:
        sentences = [s.text for s in paper_sentences([p]) if CUES[key].search(s.plain)][:CUED_SENTENCES]
        if sentences:
            out.append(Passage(" ".join(sentences), p.section, p.page_start, p.page_end, p.chunk_id))
    return out


def _not_found(key: str, n_sentences: int, searched: str, asked: str) -> ChecklistItem:
    said = [f"the rules read all {n_sentences} sentences (references aside)"]
    said += [x for x in (searched, asked) if x]
    return ChecklistItem(key, False, decided_by=NOT_FOUND, searched="; ".join(said))


def _extracted(
    key: str, paper_id: str, n_sentences: int, search, llm, cued_passages
) -> tuple[ChecklistItem, int]:
    """An item the rules did not find: searched, and asked of the LLM where a passage found uses
    its words (`llm` None: not asked). Returns the item and the LLM calls made."""
    passages, searched, cued = cued_passages
    if not cued:
        asked = "no passage found uses the item's words" if passages else ""
        return _not_found(key, n_sentences, searched, asked), 0
    if llm is None:
        return _not_found(key, n_sentences, searched, "no extraction model"), 0
    try:
        reply = ask(llm, key, BY_KEY[key].question, cued, paper_id=paper_id)
    except ReaderError as exc:
        return _not_found(key, n_sentences, searched, f"the extraction failed ({exc})"), 0
    got = located(key, reply, cued)
    if got is None:
        said = "NONE" if is_none(reply) else f"“{short(reply.strip(), 80)}”, not a span"
        return _not_found(key, n_sentences, searched, f"the extraction model answered {said}"), 1
    p = got.passage
    item = ChecklistItem(
        key,
        True,
        value=short(got.span, 120),
        quote=got.sentence,
        page_start=p.page_start,
        page_end=p.page_end,
        chunk_id=p.chunk_id,
        section=p.section,
        decided_by=EXTRACTION,
        searched=searched + "; copied by the extraction model, found word for word in the passage",
    )
    return item, 1


def build_checklist(
    paper_id: str,
    title: str,
    passages: list[Passage],
    *,
    search: Search | None = None,
    llm=None,
    max_workers: int = 4,
) -> Checklist:
    """The checklist of a paper from its passages (in paper order, with sections and pages)."""
    sentences = paper_sentences(passages)
    by_rule = find_all(sentences, title)
    items = {key: _from_rule(key, found) for key, found in by_rule.items() if found is not None}
    missing = [key for key in ITEM_KEYS if key not in items]
    searched = {}
    for key in missing:
        passages, said = _searched(key, paper_id, search)
        searched[key] = (passages, said, _cued(key, passages))
    asking = [k for k in ASKED_FIRST if k in missing and searched[k][2]][:MAX_EXTRACTIONS]

    def one(key: str) -> tuple[ChecklistItem, int]:
        if llm is not None and searched[key][2] and key not in asking:
            passages, said, _ = searched[key]
            cap = f"not asked: at most {MAX_EXTRACTIONS} extraction calls a paper"
            return _not_found(key, len(sentences), said, cap), 0
        return _extracted(key, paper_id, len(sentences), search, llm, searched[key])

    if len(missing) > 1 and max_workers > 1:
        with ThreadPoolExecutor(max_workers=min(max_workers, len(missing))) as pool:
            done = list(pool.map(one, missing))
    else:
        done = [one(key) for key in missing]
    calls = 0
    for key, (item, n) in zip(missing, done):
        items[key] = item
        calls += n
    return Checklist(paper_id, [items[key] for key in ITEM_KEYS], llm_calls=calls)
