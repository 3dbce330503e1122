"""The audited note back into Zotero: a child note of the paper's Zotero item, written through
Zotero's web API with the user's key (READER_ZOTERO_LIBRARY, READER_ZOTERO_API_KEY).

    html = note_html(note)                           # the note as the HTML Zotero's notes hold
    ZoteroNotes(library, key).write(item_key, html, earlier)  -> (note key, version, what happened)

- new: POST {base}/{library}/items with [{"itemType": "note", "parentItem": KEY, "note": HTML,
  "tags": [{"tag": "reader"}]}], headers Zotero-API-Key, Zotero-API-Version: 3 and a
  Zotero-Write-Token (a retried request is not applied twice); the reply's "successful"/"failed".
- again: PUT {base}/{library}/items/{note key} with If-Unmodified-Since-Version: the version written
  last time; 204 is done. 412 (the note was edited in Zotero since) leaves it as it is and writes a
  new note beside it; 404 (deleted in Zotero) writes a new one.
The note key and version are kept with the paper (papers.zotero_meta["reader_note"]).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from markupsafe import escape

from reader import http
from reader.errors import ReaderError

BASE_URL = "https://api.zotero.org"
TAG = "reader"


class ZoteroWriteError(ReaderError):
    """Zotero refused or could not be reached; the message says why and what to do."""


def note_html(note) -> str:
    """The note (reader.export.markdown.Note) as HTML: the analyses with their 待验证 sentences
    marked, the reader's judgements, the follow-up questions and the highlights."""
    parts = [f"<h1>{escape(note.title)}</h1>", f"<p>Reviewed by reader on {escape(note.reviewed_at)}: "]
    parts[-1] += (
        f"{note.sentences} sentences audited against the paper, {note.flagged} marked 待验证 "
        f"(no support found).</p>"
    )
    for analysis in note.analyses:
        parts.append(f"<h2>{escape(analysis.title)}</h2>")
        for block in analysis.blocks:
            if block.flag is not None:
                why = (
                    f" Nearest evidence ({escape(block.flag.pages)}): “{escape(block.flag.evidence)}”"
                    if block.flag.evidence
                    else ""
                )
                parts.append(
                    f"<blockquote><p><strong>[待验证]</strong> {escape(block.flag.sentence)}</p><p>{why}</p></blockquote>"
                )
            elif block.text.strip():
                parts.append(f"<p>{escape(block.text)}</p>")
            if block.judgement is not None:
                judged = block.judgement
                comment = f" — {escape(judged.comment)}" if judged.comment else ""
                parts.append(
                    f"<p><em>Your judgement: {escape(judged.verdict)} ({escape(judged.relation)}){comment}</em></p>"
                )
    if note.followups:
        parts.append("<h2>Follow-up questions</h2>")
        for item in note.followups:
            sources = "".join(f"<li>{escape(s['label'])}</li>" for s in item.sources)
            parts.append(
                f"<p><strong>{escape(item.question)}</strong></p><p>{escape(item.answer)}</p>"
                + (f"<ul>{sources}</ul>" if sources else "")
            )
    if note.highlights:
        parts.append("<h2>Your highlights</h2><ul>")
        for h in note.highlights:
            extra = f" — {escape(h.note)}" if h.note else ""
            parts.append(f"<li>p. {h.page}: “{escape(h.text)}”{extra}</li>")
        parts.append("</ul>")
    return '<div data-schema-version="9">' + "".join(parts) + "</div>"


class ZoteroNotes:
    def __init__(self, library: str, api_key: str, *, base_url: str = BASE_URL, timeout_s: float = 20.0):
        self.library, self.api_key = library, api_key
        self.base_url, self.timeout_s = base_url.rstrip("/"), timeout_s

    def _headers(self, **extra) -> dict:
        return {"Zotero-API-Key": self.api_key, "Zotero-API-Version": "3", **extra}

    def _says(self, failure: http.HttpFailure) -> str:
        if failure.status == 403:
            return (
                f"Zotero refused the key for {self.library} (HTTP 403): give READER_ZOTERO_API_KEY a key "
                "with write access to that library (zotero.org/settings/keys)"
            )
        if failure.status == 404:
            return f"Zotero has no library {self.library} (HTTP 404): check READER_ZOTERO_LIBRARY"
        return f"Zotero: {failure}"

    def _item(self, item_key: str, html: str) -> dict:
        return {"itemType": "note", "parentItem": item_key, "note": html, "tags": [{"tag": TAG}]}

    def create(self, item_key: str, html: str) -> tuple[str, int]:
        url = f"{self.base_url}/{self.library}/items"
        headers = self._headers(**{"Zotero-Write-Token": secrets.token_hex(16)})
        try:
            response = http.send(
                "POST", url, [self._item(item_key, html)], headers=headers, timeout_s=self.timeout_s
            )
            reply = http.json_object(response)
        except http.HttpFailure as failure:
            raise ZoteroWriteError(self._says(failure)) from None
        done = (reply.get("successful") or {}).get("0")
        if not isinstance(done, dict) or not done.get("key"):
            failed = (reply.get("failed") or {}).get("0") or {}
            raise ZoteroWriteError(
                f"Zotero did not take the note for item {item_key}: {failed.get('message') or 'no reason given'}"
                " (is the item in that library?)"
            )
        return str(done["key"]), int(
            done.get("version") or response.headers.get("Last-Modified-Version") or 0
        )

    def write(self, item_key: str, html: str, earlier: dict | None) -> tuple[str, int, str]:
        """Write the note (updating the one written before when it is unchanged in Zotero) ->
        (note key, version, "created" / "updated" / a sentence on why a new one was created)."""
        if not earlier or not earlier.get("key"):
            return (*self.create(item_key, html), "created")
        url = f"{self.base_url}/{self.library}/items/{earlier['key']}"
        headers = self._headers(**{"If-Unmodified-Since-Version": str(earlier.get("version", 0))})
        try:
            response = http.send(
                "PUT",
                url,
                self._item(item_key, html),
                headers=headers,
                timeout_s=self.timeout_s,
                accept=(404, 412),
            )
        except http.HttpFailure as failure:
            raise ZoteroWriteError(self._says(failure)) from None
        if response.status_code == 412:
            key, version = self.create(item_key, html)
            return (
                key,
                version,
                "created beside the earlier note, which was edited in Zotero since (left as it is)",
            )
        if response.status_code == 404:
            key, version = self.create(item_key, html)
            return key, version, "created again: the earlier note was deleted in Zotero"
        return (
            earlier["key"],
            int(response.headers.get("Last-Modified-Version") or earlier.get("version", 0) + 1),
            "updated",
        )


@dataclass
class NoteRow:
    paper_id: str
    title: str
    status: str  # created | updated | skipped | error
    note_key: str = ""
    detail: str = ""

    def to_json(self) -> dict:
        return {
            "paper_id": self.paper_id,
            "title": self.title,
            "status": self.status,
            "note_key": self.note_key,
            "detail": self.detail,
        }


@dataclass
class ZoteroNoteReport:
    rows: list[NoteRow]

    def to_json(self) -> dict:
        return {"notes": [r.to_json() for r in self.rows]}


def write_notes(db, paper_ids: list[str] | None, notes: ZoteroNotes) -> ZoteroNoteReport:
    """The note of each paper (None: every reviewed paper from Zotero) as a child note of its
    Zotero item; a paper not from Zotero or not reviewed is a skipped row, a refusal an error row."""
    from sqlalchemy import select

    from reader.export.markdown import collect_note
    from reader.store.db import transaction
    from reader.store.tables import Paper

    with db() as session:
        if paper_ids is None:
            paper_ids = list(session.scalars(select(Paper.id).where(Paper.zotero_key.is_not(None))))
    rows = []
    for paper_id in paper_ids:
        with db() as session:
            paper = session.get(Paper, paper_id)
            note = collect_note(session, paper)
            item_key, meta = paper.zotero_key, dict(paper.zotero_meta or {})
            row = NoteRow(paper_id, paper.title or "", "skipped")
        if not item_key:
            row.detail = "not from Zotero: it has no item to attach a note to (reader ingest --zotero)"
        elif note is None:
            row.detail = "no review yet: run reader read on it first"
        else:
            try:
                key, version, row.status = notes.write(item_key, note_html(note), meta.get("reader_note"))
            except ZoteroWriteError as exc:
                row.status, row.detail = "error", str(exc)
            else:
                row.note_key = key
                if row.status not in ("created", "updated"):
                    row.status, row.detail = "created", row.status
                meta["reader_note"] = {"key": key, "version": version}
                with transaction(db) as session:
                    session.get(Paper, paper_id).zotero_meta = meta
        rows.append(row)
    return ZoteroNoteReport(rows)
