"""Build the extraction table: for each paper, fill its cells from its abstract and the stored
synthesis (task, method, headline result: reader.table.cells) and the paper's rigour checklist (datasets and sizes, baselines, and any
checklist item chosen as a column: reader.checklist, stored by the read or made by the rules),
then audit every cell as the audit checks a sentence, against the passages it came from; a cell
without support gets [待验证]. A question of the user's own is a column too: asked of every paper
with the question pipeline (`ask`), its answer audited there against its passages (grounded or
not), with the passages it rests on.

`audit_claims(paper_id, claims, evidence_for) -> AuditResult` is the audit of any text wired
by the composition root (reader.deepread.audit_claims): the guards over the paper's facts, the
claim checker, then the verifier in batches. Here each cell is a claim and its evidence is its
own candidate passages (focused to their best sentences, reader.audit.evidence.focus).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import select

from reader.audit.evidence import focus
from reader.audit.loop import SUPPORTED, UNCHECKED, UNSUPPORTED, AuditResult
from reader.audit.record import newest_analyses
from reader.audit.verify import EvidenceRef
from reader.errors import PaperNotFound, ReaderError
from reader.table.cells import (
    SYNTHESIS_COLUMNS,
    abstract_method,
    abstract_task,
    checklist_value,
    headline,
    nearest_sentence,
    synthesis_sections,
    synthesis_sentence,
)
from reader.table.model import COLUMNS, Cell, ExtractionTable, Source, TableRow
from reader.text.rigour import BY_KEY

MAX_PAPERS = 50  # one table: each paper costs a search per cell and a verifier call per 4 cells
SOURCES_PER_CELL = 3

AuditClaims = Callable[[str, list[str], Callable[[list[str]], list[EvidenceRef]]], AuditResult]
Search = Callable[[str, str], list]
Ask = Callable[[str, str], object]  # (question, paper_id) -> reader.crag.pipeline.AskResult
MAX_QUESTIONS = 5  # a question column costs a question pipeline run per paper
EXTRA_COLUMNS = [key for key in BY_KEY if key not in ("datasets", "baselines")]


def table_columns(columns=(), questions=()) -> list[tuple[str, str]]:
    """The table's (key, heading): COLUMNS, the chosen checklist items, then the questions (q1 …)."""
    unknown = [c for c in columns if c not in EXTRA_COLUMNS]
    if unknown:
        raise ReaderError(
            f"no checklist column {', '.join(map(repr, unknown))}: choose from {', '.join(EXTRA_COLUMNS)}"
        )
    questions = [" ".join(q.split()) for q in questions if q and q.strip()]
    if len(questions) > MAX_QUESTIONS:
        raise ReaderError(f"{len(questions)} questions; a table asks at most {MAX_QUESTIONS}: ask fewer")
    return (
        list(COLUMNS)
        + [(key, BY_KEY[key].label) for key in dict.fromkeys(columns)]
        + [(f"q{n}", q) for n, q in enumerate(dict.fromkeys(questions), 1)]
    )


def build_table(
    paper_ids: list[str],
    *,
    db,
    search: Search,
    audit_claims: AuditClaims,
    columns=(),
    questions=(),
    ask: Ask | None = None,
) -> ExtractionTable:
    """The table for these stored papers, in this order (each once); `columns`: checklist items
    to add (keys of reader.text.rigour ITEMS); `questions`: the user's own, each answered by `ask`."""
    paper_ids = list(dict.fromkeys(paper_ids))
    if not paper_ids:
        raise ReaderError("no papers chosen for the table: give one or more paper ids or title prefixes")
    if len(paper_ids) > MAX_PAPERS:
        raise ReaderError(
            f"{len(paper_ids)} papers chosen; a table holds at most {MAX_PAPERS}: choose fewer papers"
        )
    table = ExtractionTable(rows=[], columns=table_columns(columns, questions))
    asked = [(key, heading) for key, heading in table.columns if key.startswith("q")]
    if asked and ask is None:
        raise ReaderError("this table cannot ask questions: no question pipeline was given")
    for paper_id in paper_ids:
        row, passages = _filled_row(paper_id, db, search, table.columns)
        table.llm_calls += _audit_row(row, passages, audit_claims)
        for key, question in asked:
            table.llm_calls += _answered(row, key, question, ask)
        table.rows.append(row)
    return table


def _answered(row: TableRow, key: str, question: str, ask: Ask) -> int:
    """A question's cell: the pipeline's answer, grounded (every sentence supported by its passages,
    the pipeline's own audit) or not, with the paper's passages it rests on; the LLM calls made."""
    try:
        answer = ask(question, row.paper_id)
    except ReaderError as exc:
        row.notes.append(f"{key}: not answered ({exc})")
        row.cells[key] = Cell(key, verdict="")
        return 0
    if answer.not_found:
        row.notes.append(f"{key}: the paper's passages do not answer “{question}”")
        return answer.llm_calls
    sources = [
        Source(c.chunk_id, c.page_start, c.page_end, c.refined or c.text)
        for c in answer.sources
        if c.paper_id == row.paper_id and c.chunk_id is not None
    ]
    cell = Cell(key, _trimmed(answer.answer), "question: answered from the paper's passages", sources)
    cell.verdict = SUPPORTED if answer.grounded else UNSUPPORTED
    cell.reasons = [answer.grounded_reason] if answer.grounded_reason else []
    cell.quote = sources[0].text if sources else ""
    row.cells[key] = cell
    return answer.llm_calls


def _trimmed(text: str, limit: int = 400) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rsplit(" ", 1)[0] + "…"


def _filled_row(paper_id: str, db, search: Search, columns) -> tuple[TableRow, dict[int, Source]]:
    """The row's cells with their values and candidate sources, not yet audited; and the
    paper's passages by id."""
    from reader.checklist import checklist_of
    from reader.store.tables import Chunk, Paper

    with db() as session:
        paper = session.get(Paper, paper_id)
        if paper is None:
            raise PaperNotFound(f"no paper with id {paper_id!r}: see `reader papers` for what is stored")
        synthesis = newest_analyses(session, paper_id).get("synthesis")
        stored = _stored_evidence(synthesis)
        chunks = session.scalars(select(Chunk).where(Chunk.paper_id == paper_id).order_by(Chunk.ordinal))
        passages = [(c.section, Source(c.id, c.page_start, c.page_end, c.text, c.section)) for c in chunks]
        row = TableRow(paper_id, paper.title or "", {key: Cell(key) for key, _ in columns})
        final_text = synthesis.final_text if synthesis is not None else ""
        abstract = paper.abstract or ""
        checklist = checklist_of(session, paper_id)

    sections = synthesis_sections(final_text)
    if synthesis is None:
        row.notes.append("no synthesis stored: review the paper to fill task, method and headline result")
    synthesis_headline = synthesis_sentence(sections, SYNTHESIS_COLUMNS["result"], headline=True)
    best_result = headline(abstract, synthesis_headline)
    from_abstract = {
        "task": abstract_task(abstract, synthesis_sentence(sections, SYNTHESIS_COLUMNS["task"])),
        "method": abstract_method(abstract),
        "result": best_result if best_result != synthesis_headline else "",
    }
    for key in ("task", "method", "result"):
        heading = SYNTHESIS_COLUMNS[key]
        value = (
            best_result
            if key == "result"
            else from_abstract.get(key) or synthesis_sentence(sections, heading)
        )
        origin = "abstract" if from_abstract.get(key) else f"synthesis: {heading}"
        if value:
            row.cells[key] = Cell(key, value, origin, _with_search(value, stored, paper_id, search))
        elif synthesis is not None:
            row.notes.append(f"{key}: neither the abstract nor the synthesis (under “{heading}”) says it")

    by_id = {source.chunk_id: source for _, source in passages}
    items = checklist.by_key if checklist is not None else {}
    for key, _ in columns:
        if key in ("task", "method", "result") or key.startswith("q"):
            continue
        item = items.get(key)
        if item is None or not item.found:
            why = item.searched if item is not None and item.searched else "the paper has no passages"
            row.notes.append(f"{key}: not found in the paper ({why})")
            continue
        whole = by_id.get(item.chunk_id)
        source = whole or Source(
            item.chunk_id, item.page_start or 1, item.page_end or 1, item.quote, item.section
        )
        origin = f"checklist: {BY_KEY[key].label} ({item.decided_by})"
        row.cells[key] = Cell(key, checklist_value(key, item), origin, [source])
    return row, by_id


def _audit_row(row: TableRow, passages: dict[int, Source], audit_claims: AuditClaims) -> int:
    """Audit the row's cells (each against its own candidate passages); the LLM calls made.
    Each cell's quote is the sentence of its first source's whole passage nearest to it."""
    cells = [cell for cell in row.cells.values() if cell.value]
    if not cells:
        return 0
    candidates: dict[str, list[EvidenceRef]] = {}
    for cell in cells:
        candidates.setdefault(cell.value, []).extend(_as_ref(s) for s in cell.sources)

    def evidence_for(claims: list[str]) -> list[EvidenceRef]:
        return focus(claims, [candidates.get(claim, []) for claim in claims])

    try:
        result = audit_claims(row.paper_id, list(candidates), evidence_for)
    except ReaderError as exc:
        result = None
        for cell in cells:
            cell.verdict, cell.reasons = UNCHECKED, [f"not checked: {exc}"]
    verdicts = {s.text: s for s in result.sentences} if result is not None else {}
    for cell in cells:
        checked = verdicts.get(cell.value)
        if checked is not None:
            cell.verdict, cell.reasons = checked.verdict, list(checked.reasons)
            if checked.evidence:  # what the audit read, the passage nearest to the cell first
                cell.sources = [
                    Source(e.chunk_id, e.page_start, e.page_end, e.text) for e in checked.evidence
                ]
        elif result is not None:
            cell.verdict, cell.reasons = UNCHECKED, ["not checked: the audit returned no verdict"]
        if cell.source is not None:  # the sentence from the whole passage, not the audit's excerpt
            whole = passages.get(cell.source.chunk_id)
            text, section = (whole.text, whole.section) if whole else (cell.source.text, "")
            cell.quote = nearest_sentence(cell.value, text, section)
    return result.llm_calls if result is not None else 0


def _stored_evidence(synthesis) -> dict[str, list[Source]]:
    """sentence (whitespace normalised) -> the passages its stored verdict was judged against."""
    if synthesis is None or not synthesis.iterations:
        return {}
    return {
        " ".join(v.text.split()): [
            Source(e.chunk_id, e.page_start, e.page_end, e.text) for e in v.evidence if e.chunk_id is not None
        ]
        for v in synthesis.iterations[-1].verdicts
    }


def _with_search(value: str, stored: dict[str, list[Source]], paper_id: str, search: Search) -> list[Source]:
    """A synthesis sentence's candidate passages: those its stored verdict had, then what the
    search finds for it; each passage once, at most SOURCES_PER_CELL."""
    found = list(stored.get(value, []))
    chunk_ids = {s.chunk_id for s in found}
    for source in _search(value, paper_id, search):
        if source.chunk_id not in chunk_ids:
            found.append(source)
            chunk_ids.add(source.chunk_id)
    return found[:SOURCES_PER_CELL]


def _search(query: str, paper_id: str, search: Search) -> list[Source]:
    """The paper's passages the search finds for `query`, best first; none when it fails (the
    audit then checks against the paper's opening text and says so)."""
    try:
        hits = search(query, paper_id)
    except Exception:  # a broken index must not lose the table; the audit notes the fallback
        return []
    ranked = sorted(hits, key=lambda h: h.score, reverse=True)[:SOURCES_PER_CELL]
    return [Source(h.chunk_id, h.page_start, h.page_end, h.text, h.section) for h in ranked]


def _as_ref(source: Source) -> EvidenceRef:
    return EvidenceRef(source.chunk_id, source.page_start, source.page_end, source.text)
