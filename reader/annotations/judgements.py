"""A researcher's own judgement of a sentence, kept beside the audit's verdict.

A judgement says the reader found the sentence supported by the paper or not, with an
optional comment and name. It confirms or overrules the audit: a `[待验证]` sentence judged
supported overrules the flag, a sentence the audit passed judged unsupported flags it.

Sentences are named `<kind>-<n>`: the n-th sentence (from 1) of the paper's newest critique or
synthesis, as `reader show --verdicts` numbers them. A judgement is stored under the
sentence's text (its sha256), so it stays with the sentence when the paper is reviewed again
and the same sentence comes back.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from reader.audit.loop import SUPPORTED, UNANSWERED, UNCHECKED, UNSUPPORTED
from reader.errors import Conflict, ReaderError
from reader.store.tables import Analysis, AnalysisIteration, SentenceJudgement, SentenceVerdict, utcnow
from reader.text.controls import clean_text

JUDGEMENTS = (SUPPORTED, UNSUPPORTED)
GONE = "the sentence is no longer in the review"  # a review since dropped it; the judgement is kept
NOT_JUDGED = "none"  # the state (judgement_state) of a sentence without a judgement
COMMENT_LIMIT = 2000
NAME_LIMIT = 100
KINDS = ("synthesis", "critique")
_SENTENCE_ID = re.compile(r"^(?P<kind>[a-z]+)-(?P<n>[0-9]{1,9})$")


def sentence_key(text: str) -> str:
    """What a judgement is stored under: the sha256 of the sentence with its spaces evened."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()


def sentence_id(kind: str, ordinal: int) -> str:
    """`critique-3` for the stored verdict with ordinal 2 (ordinals count from 0)."""
    return f"{kind}-{ordinal + 1}"


def audit_flagged(audit_verdict: str) -> bool:
    """Whether the audit marked the sentence [待验证] (unsupported, or unchecked)."""
    return audit_verdict in (UNSUPPORTED, UNCHECKED)


def marked_change(judgements) -> dict[str, int]:
    """How the reader's judgements of sentences in the review change what is shown marked:
    {"flagged": n, "unchecked": n}, each negative for a mark the reader overruled (judged
    supported) and positive for a passed sentence the reader judged unsupported (counted
    flagged). The library's flagged count and the note's reader/has-unverified tag follow it."""
    change = {"flagged": 0, "unchecked": 0}
    for j in judgements:
        if not j.in_review:
            continue
        if j.verdict == SUPPORTED and j.audit_verdict == UNSUPPORTED:
            change["flagged"] -= 1
        elif j.verdict == SUPPORTED and j.audit_verdict == UNCHECKED:
            change["unchecked"] -= 1
        elif j.verdict == UNSUPPORTED and not audit_flagged(j.audit_verdict):
            change["flagged"] += 1
    return change


def relation(reader_verdict: str, audit_verdict: str) -> str:
    """How the reader's verdict stands to the audit's, in words."""
    if audit_verdict == UNCHECKED:
        return "the audit could not check it (待验证)"
    if audit_verdict == UNSUPPORTED:
        return (
            "overrules the audit's 待验证 flag"
            if reader_verdict == SUPPORTED
            else "agrees with the audit's 待验证 flag"
        )
    if audit_verdict in (SUPPORTED, UNANSWERED):
        return (
            "agrees with the audit" if reader_verdict == SUPPORTED else "overrules the audit, which passed it"
        )
    return GONE


def judgement_state(row: SentenceJudgement | None) -> str:
    """A short token for what is stored of a sentence's judgement: the judging page sends back
    the one it was shown, so a save made from a page older than the judgement (another tab,
    `reader judge` meanwhile) is refused instead of replacing it unseen. NOT_JUDGED for none."""
    if row is None:
        return NOT_JUDGED
    moment = row.updated_at
    if moment is not None and moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    when = moment.strftime("%Y-%m-%d %H:%M:%S.%f") if moment is not None else ""
    raw = "|".join((str(row.id), row.verdict or "", row.comment or "", row.judged_by or "", when))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]


@dataclass
class Judgement:
    """One stored judgement as plain data. `sentence_id` is where the sentence stands in the
    newest analyses (None when a review since has dropped it); `audit_verdict` is the audit's
    verdict of that sentence now (what it was when judged, when the sentence is gone)."""

    paper_id: str
    sentence: str
    verdict: str  # supported | unsupported
    comment: str
    judged_by: str
    audit_verdict: str
    updated_at: datetime | None
    sentence_id: str | None = None
    state: str = NOT_JUDGED  # judgement_state of the stored row

    @property
    def in_review(self) -> bool:
        """Whether its sentence is in the paper's newest review (a review since may have dropped it)."""
        return self.sentence_id is not None

    @property
    def overrules(self) -> bool:
        if self.audit_verdict == UNCHECKED or not self.in_review:
            return False
        return (self.verdict == SUPPORTED) == audit_flagged(self.audit_verdict)

    @property
    def relation(self) -> str:
        if not self.in_review:
            return GONE
        return relation(self.verdict, self.audit_verdict)

    @property
    def decided_on(self) -> str:
        return self.updated_at.date().isoformat() if self.updated_at else ""

    @property
    def decided_by(self) -> str:
        """Who decided, for a line: the name given, else "the reader"."""
        return self.judged_by or "the reader"

    def to_json(self) -> dict:
        return {
            "sentence_id": self.sentence_id,
            "sentence": self.sentence,
            "verdict": self.verdict,
            "comment": self.comment,
            "judged_by": self.judged_by,
            "audit_verdict": self.audit_verdict,
            "overrules_audit": self.overrules,
            "relation": self.relation,
            "updated_at": self.updated_at.isoformat() if self.updated_at else None,
        }


@dataclass
class JudgementResult:
    """What `Reader.judge` did: the judgement stored, or none kept (judgement None): `withdrawn`
    says whether there was one to withdraw."""

    paper_id: str
    title: str
    sentence_id: str
    sentence: str
    audit_verdict: str
    judgement: Judgement | None
    withdrawn: bool = False

    def to_json(self) -> dict:
        return {
            "paper_id": self.paper_id,
            "title": self.title,
            "sentence_id": self.sentence_id,
            "sentence": self.sentence,
            "audit_verdict": self.audit_verdict,
            "judgement": self.judgement.to_json() if self.judgement else None,
            "withdrawn": self.withdrawn,
        }


# ---------------------------------------------------------------- reading


def final_sentences(session: Session, paper_id: str) -> dict[str, SentenceVerdict]:
    """sentence id -> the audit's verdict of that sentence, over the final iteration of the
    paper's newest analysis of each kind, in the order the page shows the kinds."""
    newest: dict[str, int] = {}
    for analysis_id, kind in session.execute(
        select(Analysis.id, Analysis.kind).where(Analysis.paper_id == paper_id).order_by(Analysis.id)
    ):
        newest[kind] = analysis_id
    found: dict[str, SentenceVerdict] = {}
    for kind in sorted(newest, key=lambda k: (KINDS.index(k) if k in KINDS else len(KINDS), k)):
        final = session.scalars(
            select(AnalysisIteration)
            .where(AnalysisIteration.analysis_id == newest[kind])
            .order_by(AnalysisIteration.iteration.desc())
            .limit(1)
        ).first()
        for verdict in final.verdicts if final else []:
            found[sentence_id(kind, verdict.ordinal)] = verdict
    return found


def _plain(row: SentenceJudgement, where: str | None, now: SentenceVerdict | None) -> Judgement:
    return Judgement(
        paper_id=row.paper_id,
        sentence=row.sentence,
        verdict=row.verdict,
        comment=row.comment or "",
        judged_by=row.judged_by or "",
        audit_verdict=now.verdict if now is not None else (row.audit_verdict or ""),
        updated_at=row.updated_at,
        sentence_id=where,
        state=judgement_state(row),
    )


def of_user(column, user: str | None):
    """The condition for the rows of one account (`user`), or of the single-user mode (None)."""
    return column.is_(None) if user is None else column == user


def judgements_of(session: Session, paper_id: str, user: str | None = None) -> dict[str, Judgement]:
    """sentence key (sentence_key) -> the paper's judgement of that sentence, made by `user`'s
    account (None: in the single-user mode)."""
    rows = list(
        session.scalars(
            select(SentenceJudgement)
            .where(SentenceJudgement.paper_id == paper_id, of_user(SentenceJudgement.user_name, user))
            .order_by(SentenceJudgement.id)
        )
    )
    if not rows:
        return {}
    where: dict[str, str] = {}  # sentence key -> its first id
    sentences = final_sentences(session, paper_id)
    for sid, verdict in sentences.items():
        where.setdefault(sentence_key(verdict.text), sid)
    found = {}
    for row in rows:
        sid = where.get(row.sentence_sha256)
        found[row.sentence_sha256] = _plain(row, sid, sentences[sid] if sid else None)
    return found


def with_judgements(session: Session, stored, user: str | None = None) -> None:
    """Give each sentence of `reader show`'s analyses (reader.audit.record.StoredAnalyses) its
    id and the reader's judgement (or None), and the analyses the list of every judgement
    (`user`'s, as judgements_of)."""
    found = judgements_of(session, stored.paper_id, user)
    for analysis in stored.analyses:
        for n, sentence in enumerate(analysis["sentences"]):
            sentence["id"] = sentence_id(analysis["kind"], n)
            judged = found.get(sentence_key(sentence["text"]))
            sentence["judgement"] = judged.to_json() if judged else None
    stored.judgements = [j.to_json() for j in found.values()]


# ---------------------------------------------------------------- writing


def _checked_comment(text: str, limit: int, what: str) -> str:
    text = clean_text(text or "").strip()
    if len(text) > limit:
        raise ReaderError(f"the {what} is {len(text):,} characters long; keep it to {limit:,}")
    return text


def find_sentence(session: Session, paper_id: str, sid: str) -> SentenceVerdict:
    """The audit's verdict of sentence `sid` (`critique-3`), or one line saying which exist."""
    sentences = final_sentences(session, paper_id)
    if not sentences:
        raise ReaderError("this paper has no review yet, so there is no sentence to judge; review it first")
    match = _SENTENCE_ID.match(sid.strip().lower())
    if match is None or sid.strip().lower() not in sentences:
        ranges = []
        for kind in KINDS:
            count = sum(1 for key in sentences if key.startswith(kind + "-"))
            if count:
                ranges.append(f"{kind}-1 … {kind}-{count}")
        raise ReaderError(
            f"{sid!r}: no such sentence; give one of {', '.join(ranges)} "
            "(as `reader show PAPER --verdicts` numbers them)"
        )
    return sentences[sid.strip().lower()]


def judge(
    session: Session,
    paper_id: str,
    sid: str,
    verdict: str | None,
    *,
    comment: str = "",
    judged_by: str = "",
    expected_key: str | None = None,
    seen: str | None = None,
    user: str | None = None,
) -> tuple[SentenceVerdict, Judgement | None, bool]:
    """Store the reader's `verdict` (supported or unsupported) of sentence `sid`, replacing an
    earlier one, or withdraw it (`verdict` None) -> (the audit's verdict, the judgement kept,
    whether one was withdrawn). `expected_key`: the sentence_key of the sentence the reader saw;
    when the sentence at `sid` is another now (the paper was reviewed again since), nothing is
    stored and the error says to reload. `seen`: the judgement_state the reader saw; when the
    judgement changed meanwhile (another tab, `reader judge`), nothing is stored (Conflict).
    Without `seen` the last writer wins. `user`: the account it is kept for (None: the
    single-user mode's). Run it in a transaction that holds JUDGEMENT_LOCK, so
    that two first judgements of one sentence at once do not both insert."""
    if verdict is not None and verdict not in JUDGEMENTS:
        raise ReaderError(f"{verdict!r}: a judgement is 'supported' or 'unsupported'")
    audited = find_sentence(session, paper_id, sid)
    key = sentence_key(audited.text)
    if expected_key is not None and expected_key != key:
        raise ReaderError(
            f"{sid}: the review changed since the page was shown (the paper was reviewed again); "
            "reload the page and judge the sentence there"
        )
    comment = _checked_comment(comment, COMMENT_LIMIT, "comment")
    judged_by = _checked_comment(judged_by, NAME_LIMIT, "name")
    row = _judgement_row(session, paper_id, key, user)
    if seen is not None and seen != judgement_state(row):
        raise Conflict(changed_meanwhile(sid))
    if verdict is None:
        if row is not None:
            session.execute(delete(SentenceJudgement).where(SentenceJudgement.id == row.id))
        return audited, None, row is not None
    if row is None:
        row = SentenceJudgement(paper_id=paper_id, sentence_sha256=key, user_name=user)
        session.add(row)
    row.sentence, row.kind = audited.text, sid.strip().lower().rpartition("-")[0]
    row.verdict, row.comment, row.judged_by = verdict, comment, judged_by
    row.audit_verdict, row.updated_at = audited.verdict, utcnow()
    session.flush()
    return audited, _plain(row, sid.strip().lower(), audited), False


def _judgement_row(session: Session, paper_id: str, key: str, user: str | None) -> SentenceJudgement | None:
    """`user`'s stored judgement of the sentence with this key, if any."""
    return session.scalars(
        select(SentenceJudgement).where(
            SentenceJudgement.paper_id == paper_id,
            SentenceJudgement.sentence_sha256 == key,
            of_user(SentenceJudgement.user_name, user),
        )
    ).first()


JUDGEMENT_LOCK = "reader:judgements"  # judge() runs alone among writers of judgements


def changed_meanwhile(sid: str) -> str:
    return (
        f"{sid.strip().lower()}: the judgement of this sentence was changed meanwhile (in another "
        "tab, or by reader judge); nothing was saved: reload the page to see it, then save yours again"
    )
