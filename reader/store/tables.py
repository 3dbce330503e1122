"""SQLAlchemy ORM tables. Every change here needs an Alembic migration in migrations/versions."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


class Paper(Base):
    """One source document. The id is the sha256 of the file's bytes."""

    __tablename__ = "papers"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    title: Mapped[str] = mapped_column(Text)
    authors: Mapped[list] = mapped_column(JSON, default=list)
    year: Mapped[int | None] = mapped_column(Integer, nullable=True)
    abstract: Mapped[str] = mapped_column(Text, default="")
    source_path: Mapped[str] = mapped_column(Text)
    source_kind: Mapped[str] = mapped_column(String(8))  # pdf | txt | md
    language: Mapped[str] = mapped_column(String(8), default="en")  # en | zh
    pages: Mapped[int] = mapped_column(Integer)
    text_chars: Mapped[int] = mapped_column(Integer, default=0)
    sections: Mapped[list] = mapped_column(JSON, default=list)  # [{"title", "page"}]
    ingested_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # the name the file had when it came in (an upload's browser name), and the DOI printed
    # in the PDF; None for papers stored before migration 0004 (the path's name is used then)
    file_name: Mapped[str | None] = mapped_column(Text, nullable=True)
    doi: Mapped[str | None] = mapped_column(Text, nullable=True)
    # from Zotero (migration 0006): the item key (zotero://select/library/items/KEY), a stored
    # citation key, and {"collections": [...], "type", "attachment", "venue"}; None otherwise
    zotero_key: Mapped[str | None] = mapped_column(String(16), nullable=True, index=True)
    citekey: Mapped[str | None] = mapped_column(Text, nullable=True)
    zotero_meta: Mapped[dict | None] = mapped_column(JSON(none_as_null=True), nullable=True)

    chunks: Mapped[list[Chunk]] = relationship(
        back_populates="paper",
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="Chunk.ordinal",
    )
    captions: Mapped[list[Caption]] = relationship(
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="Caption.ordinal",
    )
    references: Mapped[list[Reference]] = relationship(
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="Reference.ordinal",
    )
    tables: Mapped[list[PaperTable]] = relationship(
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="PaperTable.ordinal",
    )


class Chunk(Base):
    """A passage of a few hundred tokens with its section and page span (1-based, inclusive)."""

    __tablename__ = "chunks"
    __table_args__ = (UniqueConstraint("paper_id", "ordinal"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    paper_id: Mapped[str] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), index=True)
    ordinal: Mapped[int] = mapped_column(Integer)
    section: Mapped[str] = mapped_column(Text, default="")
    page_start: Mapped[int] = mapped_column(Integer)
    page_end: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    n_tokens: Mapped[int] = mapped_column(Integer, default=0)
    # where the passage stands on its pages: [[page, x0, y0, x1, y1], ...] as fractions of the
    # page's width and height; [] when it has none (text files), None until derived (0004)
    rects: Mapped[list | None] = mapped_column(JSON(none_as_null=True), nullable=True)

    paper: Mapped[Paper] = relationship(back_populates="chunks")


class ChunkVector(Base):
    """A passage's embedding (float32 bytes) under one embedding model (migration 0004): a
    machine builds its search index from these instead of embedding the passages again."""

    __tablename__ = "chunk_vectors"

    chunk_id: Mapped[int] = mapped_column(ForeignKey("chunks.id", ondelete="CASCADE"), primary_key=True)
    embedder: Mapped[str] = mapped_column(String(200), primary_key=True)
    dim: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes] = mapped_column(LargeBinary)


class PaperFile(Base):
    """A queued file's bytes (migration 0004), so that a worker on any machine can ingest it;
    `name` is only a label (the path it was queued from). Removed with its paper."""

    __tablename__ = "paper_files"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(Text)
    size: Mapped[int] = mapped_column(Integer)
    data: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Caption(Base):
    __tablename__ = "captions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    paper_id: Mapped[str] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), index=True)
    ordinal: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))  # figure | table
    label: Mapped[str] = mapped_column(String(32), default="")  # e.g. "Figure 2"
    page: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)


class PaperTable(Base):
    """A table of the paper as cells (migration 0012; reader/ingest/tables.py): its caption, page
    and rectangle, its rows of cell texts, how many of them are column headers, and each cell's
    rectangle ([x0, y0, x1, y1] as fractions of the page, as chunks.rects are; null for an empty
    cell). `method`: grid (pymupdf's find_tables) or words (word positions)."""

    __tablename__ = "paper_tables"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    paper_id: Mapped[str] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), index=True)
    ordinal: Mapped[int] = mapped_column(Integer)
    label: Mapped[str] = mapped_column(String(32), default="")  # e.g. "Table 2"
    caption: Mapped[str] = mapped_column(Text, default="")
    page: Mapped[int] = mapped_column(Integer)  # 1-based
    rect: Mapped[list] = mapped_column(JSON, default=list)
    rows: Mapped[list] = mapped_column(JSON, default=list)
    header_rows: Mapped[int] = mapped_column(Integer, default=0)
    cell_rects: Mapped[list] = mapped_column(JSON, default=list)
    method: Mapped[str] = mapped_column(String(16), default="")


class PaperFigure(Base):
    """A figure of the paper (migration 0014; reader/ingest/figures.py): its label, caption, page
    and rectangle ([x0, y0, x1, y1] as fractions of the page), how its picture was found (image,
    drawing, text or region) and the picture as PNG bytes."""

    __tablename__ = "paper_figures"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    paper_id: Mapped[str] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), index=True)
    ordinal: Mapped[int] = mapped_column(Integer)
    label: Mapped[str] = mapped_column(String(32), default="")  # e.g. "Figure 3"
    caption: Mapped[str] = mapped_column(Text, default="")
    page: Mapped[int] = mapped_column(Integer)  # 1-based
    rect: Mapped[list] = mapped_column(JSON, default=list)
    method: Mapped[str] = mapped_column(String(16), default="")
    png: Mapped[bytes] = mapped_column(LargeBinary, default=b"")


class Reference(Base):
    __tablename__ = "paper_references"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    paper_id: Mapped[str] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), index=True)
    ordinal: Mapped[int] = mapped_column(Integer)
    marker: Mapped[str] = mapped_column(String(32), default="")  # "[12]" or "" for author-year
    page: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)


class ReferenceLink(Base):
    """A reference entry matched against the library (migration 0011): the library paper it cites
    (by DOI, else by the cited paper's normalised title, `matched_by`), or None when the library has
    no such paper. One row per entry of a paper once it is linked (reader.ingest.links); the
    citation graph read both ways."""

    __tablename__ = "reference_links"

    reference_id: Mapped[int] = mapped_column(
        ForeignKey("paper_references.id", ondelete="CASCADE"), primary_key=True
    )
    citing_paper_id: Mapped[str] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), index=True)
    cited_paper_id: Mapped[str | None] = mapped_column(
        ForeignKey("papers.id", ondelete="SET NULL"), nullable=True, index=True
    )
    matched_by: Mapped[str] = mapped_column(String(8), default="")  # doi | title | "" (none)


class ChecklistEntry(Base):
    """One item of a paper's rigour checklist (migration 0013; reader.checklist): found or not,
    its short value, the sentence it rests on with its passage and pages, how it was decided
    (rule, extraction or not found) and what was searched. One row per item, replaced by each
    deep read; removed with the paper."""

    __tablename__ = "checklist_items"
    __table_args__ = (UniqueConstraint("paper_id", "item", name="uq_checklist_paper_item"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    paper_id: Mapped[str] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), index=True)
    item: Mapped[str] = mapped_column(String(32))
    found: Mapped[bool] = mapped_column(Boolean, default=False)
    value: Mapped[str] = mapped_column(Text, default="")
    quote: Mapped[str] = mapped_column(Text, default="")
    chunk_id: Mapped[int | None] = mapped_column(ForeignKey("chunks.id", ondelete="SET NULL"), nullable=True)
    page_start: Mapped[int | None] = mapped_column(Integer, nullable=True)
    page_end: Mapped[int | None] = mapped_column(Integer, nullable=True)
    section: Mapped[str] = mapped_column(Text, default="")
    decided_by: Mapped[str] = mapped_column(String(16), default="")  # rule | extraction | not found
    kind: Mapped[str] = mapped_column(String(16), default="")
    searched: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Analysis(Base):
    """A critique or synthesis of one paper; final_text carries the [待验证] marks.

    One of each kind per paper (migration 0004): two runs that store a paper's review at
    once cannot leave two sets; the second one's transaction fails."""

    __tablename__ = "analyses"
    __table_args__ = (UniqueConstraint("paper_id", "kind", name="uq_analyses_paper_kind"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    paper_id: Mapped[str] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16))  # critique | synthesis
    final_text: Mapped[str] = mapped_column(Text, default="")
    flagged_ratio: Mapped[float] = mapped_column(Float, default=0.0)
    regenerations: Mapped[int] = mapped_column(Integer, default=0)
    generator_model: Mapped[str] = mapped_column(Text, default="")
    verifier_model: Mapped[str] = mapped_column(Text, default="")
    left_out_sections: Mapped[list] = mapped_column(JSON, default=list)
    # why a rewrite was not kept (0008): the final text is then the one before it
    rewrite_notes: Mapped[list | None] = mapped_column(JSON, nullable=True, default=list)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    iterations: Mapped[list[AnalysisIteration]] = relationship(
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="AnalysisIteration.iteration",
    )


class AnalysisIteration(Base):
    """One generated text (iteration 0 is the first draft) and its audit."""

    __tablename__ = "analysis_iterations"
    __table_args__ = (UniqueConstraint("analysis_id", "iteration"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    analysis_id: Mapped[int] = mapped_column(ForeignKey("analyses.id", ondelete="CASCADE"), index=True)
    iteration: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    n_sentences: Mapped[int] = mapped_column(Integer, default=0)
    n_flagged: Mapped[int] = mapped_column(Integer, default=0)
    flagged_ratio: Mapped[float] = mapped_column(Float, default=0.0)

    verdicts: Mapped[list[SentenceVerdict]] = relationship(
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="SentenceVerdict.ordinal",
    )


class SentenceVerdict(Base):
    __tablename__ = "sentence_verdicts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    iteration_id: Mapped[int] = mapped_column(
        ForeignKey("analysis_iterations.id", ondelete="CASCADE"), index=True
    )
    ordinal: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    verdict: Mapped[str] = mapped_column(String(16))  # supported | unsupported | unanswered | unchecked
    llm_answer: Mapped[str] = mapped_column(String(16), default="")  # YES | NO | "" (unanswered)
    reasons: Mapped[list] = mapped_column(JSON, default=list)  # guard reasons, LLM verdict
    reused: Mapped[bool] = mapped_column(Boolean, default=False)  # verdict carried from an earlier iteration
    p_yes: Mapped[float | None] = mapped_column(Float, nullable=True)  # the verifier's P(YES), when known
    p_checker: Mapped[float | None] = mapped_column(
        Float, nullable=True
    )  # the claim checker's P(supported) (0007)
    # how the verdict was reached (0013, reader.audit.decided): verifier, checker, extraction, guard,
    # restated, tool or unchecked; and for the tool's own finding, the checklist item it states.
    # None for verdicts stored before: read from their reasons
    decided_by: Mapped[str | None] = mapped_column(String(16), nullable=True)
    checklist_item: Mapped[str | None] = mapped_column(String(32), nullable=True)

    evidence: Mapped[list[VerdictEvidence]] = relationship(
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="VerdictEvidence.rank",
    )


class VerdictEvidence(Base):
    """An evidence passage shown to the verifier; chunk_id is None for the first-3000-chars fallback
    and for what a table of the paper says of the sentence (its cell or the computation from its
    cells, reader/audit/table_checks.py), stored first."""

    __tablename__ = "verdict_evidence"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    verdict_id: Mapped[int] = mapped_column(
        ForeignKey("sentence_verdicts.id", ondelete="CASCADE"), index=True
    )
    rank: Mapped[int] = mapped_column(Integer)
    chunk_id: Mapped[int | None] = mapped_column(ForeignKey("chunks.id", ondelete="SET NULL"), nullable=True)
    page_start: Mapped[int] = mapped_column(Integer, default=1)
    page_end: Mapped[int] = mapped_column(Integer, default=1)
    text: Mapped[str] = mapped_column(Text)


class SentenceJudgement(Base):
    """A researcher's own verdict on a sentence of a paper's analysis (migration 0009): supported
    or unsupported, with an optional comment, beside the audit's. Keyed by the sentence's text
    (sentence_sha256 of it), so it stays with the sentence when the paper is reviewed again and
    the same sentence comes back; `audit_verdict` is what the audit said when it was made."""

    __tablename__ = "sentence_judgements"
    __table_args__ = (
        UniqueConstraint(
            "paper_id", "sentence_sha256", "user_name", name="uq_sentence_judgements_paper_sentence_user"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    paper_id: Mapped[str] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), index=True)
    sentence_sha256: Mapped[str] = mapped_column(String(64))
    sentence: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(16))  # the analysis it was made in: critique | synthesis
    verdict: Mapped[str] = mapped_column(String(16))  # supported | unsupported
    comment: Mapped[str] = mapped_column(Text, default="")
    audit_verdict: Mapped[str] = mapped_column(String(16), default="")
    judged_by: Mapped[str] = mapped_column(Text, default="")  # a name, when one was given
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # the account it belongs to on a `reader serve --accounts` server (migration 0015); None:
    # the single-user mode's (the CLI's, the token mode's)
    user_name: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)


class Highlight(Base):
    """A researcher's own highlight on a page of a paper's PDF (migration 0010): the text they
    selected, where it stands on the page ([[x0, y0, x1, y1], ...] as fractions of the page's
    width and height, as chunks.rects are), and an optional note. Removed with the paper."""

    __tablename__ = "highlights"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    paper_id: Mapped[str] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), index=True)
    page: Mapped[int] = mapped_column(Integer)  # 1-based
    rects: Mapped[list] = mapped_column(JSON, default=list)
    text: Mapped[str] = mapped_column(Text)
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # as SentenceJudgement.user_name: whose highlight it is, None in the single-user mode
    user_name: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)


class User(Base):
    """An account of a `reader serve --accounts` server (migration 0015): its name, its password
    as an Argon2id hash, and the failed sign-ins that lock it (reader/annotations/accounts.py)."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(Text)
    failed_logins: Mapped[int] = mapped_column(Integer, default=0)
    locked_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Question(Base):
    """A question asked with CRAG and its answer; details (sources, grades) as JSON."""

    __tablename__ = "questions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    paper_id: Mapped[str | None] = mapped_column(
        ForeignKey("papers.id", ondelete="CASCADE"), nullable=True, index=True
    )
    question: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text, default="")
    grounded: Mapped[bool] = mapped_column(Boolean, default=False)
    grounded_reason: Mapped[str] = mapped_column(Text, default="")
    route: Mapped[str] = mapped_column(String(16), default="")
    confidence: Mapped[float] = mapped_column(Float, default=0.0)
    details: Mapped[dict] = mapped_column(JSON, default=dict)
    # "asked", or "followup": asked by the follow-up questioner after a review (migration 0011)
    origin: Mapped[str] = mapped_column(String(16), default="asked", server_default="asked")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ReviewJob(Base):
    """One paper in a batch review or on the queue (reader/queue.py); makes `reader review`
    resumable and lets workers on several machines share the papers."""

    __tablename__ = "review_jobs"
    __table_args__ = (UniqueConstraint("file_sha256", name="uq_review_jobs_file_sha256"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    source_path: Mapped[str] = mapped_column(Text)
    paper_id: Mapped[str | None] = mapped_column(
        ForeignKey("papers.id", ondelete="CASCADE"), nullable=True, index=True
    )
    status: Mapped[str] = mapped_column(String(16), default="pending")  # pending|running|done|error
    stage: Mapped[str] = mapped_column(String(32), default="")
    error: Mapped[str] = mapped_column(Text, default="")
    summary: Mapped[dict] = mapped_column(JSON, default=dict)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # The queue (migration 0004). A queued job's file is in paper_files, one job per file.
    file_sha256: Mapped[str | None] = mapped_column(
        ForeignKey("paper_files.sha256", ondelete="CASCADE", name="fk_review_jobs_file_sha256"),
        nullable=True,
    )
    queued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # Who holds a running job ("host:pid"), the token of this attempt (checked before anything
    # of it is committed), and until when the lease runs unless renewed by a heartbeat.
    worker: Mapped[str] = mapped_column(Text, default="", server_default="")
    claim: Mapped[str | None] = mapped_column(String(32), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class LLMCall(Base):
    __tablename__ = "llm_calls"
    __table_args__ = (Index("ix_llm_calls_stage", "stage"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    stage: Mapped[str] = mapped_column(String(32))
    role: Mapped[str] = mapped_column(String(16))  # generator | verifier
    model: Mapped[str] = mapped_column(Text)
    paper_id: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    latency_ms: Mapped[float] = mapped_column(Float, default=0.0)
    cached: Mapped[bool] = mapped_column(Boolean, default=False)
    error: Mapped[str] = mapped_column(Text, default="")
    # What the server reported spending (llama.cpp's `timings`), when it did (migration 0003):
    # prompt processing and generation in ms, prompt tokens reused from its prompt cache.
    prompt_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    generation_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    cached_prompt_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Speculative decoding (READER_SPECULATIVE), when the server reported it (llama.cpp's
    # `draft_n`, `draft_n_accepted`; migration 0016): the tokens drafted and those of them the
    # model accepted. None for a reply that drafted nothing, as llama.cpp then says nothing.
    drafted_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    accepted_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)


class LLMCacheEntry(Base):
    """Response cache keyed by sha256 of (model, messages, parameters)."""

    __tablename__ = "llm_cache"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    model: Mapped[str] = mapped_column(Text)
    text: Mapped[str] = mapped_column(Text)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    # per-token log-probabilities, when they were asked for (the verifier's P(YES))
    logprobs: Mapped[list | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
