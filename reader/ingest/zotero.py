"""Zotero's local library -> plain data: the items with a PDF, their metadata, and one line
for everything that cannot be used.

    read_library(data_dir, collection=None) -> ZoteroLibrary

Zotero keeps `zotero.sqlite` locked while it runs, so the database (with its write-ahead
log, when there is one) is copied to a temporary folder first and only the copy is opened;
nothing of the Zotero data directory is ever written. The tables and columns read are those
of Zotero 5–7 (`version` schema 'userdata'): items, itemTypes, itemData, itemDataValues,
fields, creators, itemCreators, creatorTypes, collections, collectionItems,
itemAttachments, deletedItems. An attachment stored by Zotero (`path` = "storage:NAME") lies
in `storage/<attachment key>/NAME`; a linked file keeps its own absolute path.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from reader.errors import ReaderError
from reader.text.controls import clean_text

# userdata schema versions whose tables carry the columns read here (Zotero 5.0 to 7.x)
KNOWN_SCHEMA = range(80, 130)
LINK_IMPORTED_FILE, LINK_IMPORTED_URL, LINK_LINKED_FILE, LINK_LINKED_URL = 0, 1, 2, 3
NOT_PAPERS = ("attachment", "note", "annotation")


def default_data_dir() -> Path:
    """Zotero's default data directory: ~/Zotero on Windows, macOS and Linux alike."""
    return Path.home() / "Zotero"


@dataclass
class ZoteroItem:
    key: str  # the Zotero item key (zotero://select/library/items/KEY)
    title: str
    authors: list[str]
    year: int | None
    doi: str | None
    collections: list[str]  # "Parent/Child" paths
    item_type: str = ""
    citekey: str | None = None  # a stored citation key (Zotero's field, or "Citation Key:" in Extra)
    venue: str = ""
    pdf: Path | None = None
    attachment_key: str = ""

    def meta(self) -> dict:
        """What the paper keeps of Zotero beyond its own columns (papers.zotero_meta)."""
        data = {
            "collections": list(self.collections),
            "type": self.item_type,
            "attachment": self.attachment_key,
        }
        if self.venue:
            data["venue"] = self.venue
        return data


@dataclass
class ZoteroLibrary:
    data_dir: Path
    schema_version: int | None
    items: list[ZoteroItem] = field(default_factory=list)  # each with its PDF
    # (what, why): one line each, the rest goes on
    problems: list[tuple[str, str]] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [f"{what}: {why}" for what, why in self.problems]


def _copy_database(data_dir: Path, into: Path) -> Path:
    source = data_dir / "zotero.sqlite"
    if not data_dir.is_dir():
        raise ReaderError(
            f"{data_dir}: no such Zotero data directory; give the folder holding "
            "zotero.sqlite (Zotero: Settings → Advanced → Files and Folders)"
        )
    if not source.is_file():
        raise ReaderError(
            f"{source}: not found; give the Zotero data directory that holds "
            "zotero.sqlite (Zotero: Settings → Advanced → Files and Folders)"
        )
    copy = into / "zotero.sqlite"
    try:
        shutil.copyfile(source, copy)
        wal = data_dir / "zotero.sqlite-wal"
        if wal.is_file():  # changes Zotero has not checkpointed yet
            shutil.copyfile(wal, into / "zotero.sqlite-wal")
    except OSError as exc:
        raise ReaderError(f"{source}: cannot copy the Zotero database ({exc.strerror or exc})") from exc
    return copy


def _text(value) -> str:
    """A value of the Zotero database as text without control characters: a title, a name or a
    field of another program's database is outside text (a NUL, a terminal's escape sequence)."""
    return "" if value is None else clean_text(str(value))


def _tables(conn) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}


def _schema_version(conn, tables: set[str]) -> int | None:
    if "version" not in tables:
        return None
    row = conn.execute("SELECT version FROM version WHERE schema = 'userdata'").fetchone()
    try:
        return int(row[0]) if row else None
    except (TypeError, ValueError):
        return None


def _year(date: str) -> int | None:
    m = re.search(r"\b(1[5-9]\d\d|20\d\d)\b", date or "")
    return int(m.group(1)) if m else None


def _citekey_from_extra(extra: str) -> str | None:
    m = re.search(r"(?im)^\s*citation key\s*:\s*(\S+)\s*$", extra or "")
    return m.group(1) if m else None


def _collection_paths(conn) -> dict[int, str]:
    rows = conn.execute("SELECT collectionID, collectionName, parentCollectionID FROM collections").fetchall()
    by_id = {cid: (_text(name), parent) for cid, name, parent in rows}
    paths: dict[int, str] = {}
    for cid in by_id:
        names, seen, node = [], set(), cid
        while node in by_id and node not in seen:
            seen.add(node)
            name, parent = by_id[node]
            names.append(name)
            node = parent
        paths[cid] = "/".join(reversed(names))
    return paths


def _selected_collections(conn, paths: dict[int, str], name: str) -> set[int]:
    """The collection called `name` (its name or its path, any case) and its subcollections."""
    wanted = name.strip().strip("/").lower()
    roots = {
        cid
        for cid, path in paths.items()
        if path.lower() == wanted or path.rsplit("/", 1)[-1].lower() == wanted
    }
    if not roots:
        known = sorted(paths.values(), key=str.lower)
        shown = "; ".join(known[:12]) + (" …" if len(known) > 12 else "")
        raise ReaderError(f"no Zotero collection named {name!r}; the library has: {shown or '(none)'}")
    children: dict[int, list[int]] = {}
    for cid, parent in conn.execute("SELECT collectionID, parentCollectionID FROM collections"):
        children.setdefault(parent, []).append(cid)
    selected, todo = set(), list(roots)
    while todo:
        cid = todo.pop()
        if cid not in selected:
            selected.add(cid)
            todo.extend(children.get(cid, []))
    return selected


def _attachment_file(data_dir: Path, key: str, link_mode: int, path: str | None) -> Path | None:
    """Where an attachment's file is, or None when it has no file (a link to a web page)."""
    if link_mode in (LINK_IMPORTED_FILE, LINK_IMPORTED_URL):
        name = (
            (path or "")[len("storage:") :] if (path or "").startswith("storage:") else Path(path or "").name
        )
        return data_dir / "storage" / key / name
    if link_mode == LINK_LINKED_FILE and path:
        return Path(path)
    return None


def read_library(data_dir, collection: str | None = None) -> ZoteroLibrary:
    """The items (in `collection` and its subcollections, or all) that have a PDF attachment.

    Raises ReaderError when there is no Zotero database or it lacks the tables read; everything
    else (an item without a PDF, a missing file, an unknown schema version) is one line in
    `problems` and the other items still come back."""
    data_dir = Path(data_dir).expanduser()
    with tempfile.TemporaryDirectory(prefix="reader-zotero-") as tmp:
        copy = _copy_database(data_dir, Path(tmp))
        conn = sqlite3.connect(copy)  # the copy: the original stays untouched (and may stay locked)
        try:
            return _read(conn, data_dir, collection)
        except sqlite3.DatabaseError as exc:
            raise ReaderError(
                f"{data_dir / 'zotero.sqlite'}: cannot read it as a Zotero database "
                f"({exc}); is it a Zotero 5–7 data directory?"
            ) from exc
        finally:
            conn.close()


REQUIRED_TABLES = {
    "items",
    "itemTypes",
    "itemData",
    "itemDataValues",
    "fields",
    "creators",
    "itemCreators",
    "collections",
    "collectionItems",
    "itemAttachments",
}


@dataclass
class _Rows:
    """What `_read` uses of the Zotero tables, keyed by item id."""

    items: dict[int, tuple[str, str]]  # item -> (key, type name), deleted items left out
    values: dict[int, dict[str, str]]  # item -> field name -> value
    authors: dict[int, list[str]]
    collection_paths: dict[int, str]  # collection -> "Parent/Child"
    in_collections: dict[int, list[int]]  # item -> its collections
    attachments: dict[int, list[tuple[int, int, str, str]]]  # parent -> [(id, mode, type, path)]


def _read(conn, data_dir: Path, collection: str | None) -> ZoteroLibrary:
    tables = _tables(conn)
    version = _schema_version(conn, tables)
    library = ZoteroLibrary(data_dir=data_dir, schema_version=version)
    if version is None or version not in KNOWN_SCHEMA:
        library.problems.append((str(data_dir / "zotero.sqlite"), _unknown_schema(version)))
    missing = sorted(REQUIRED_TABLES - tables)
    if missing:
        raise ReaderError(
            f"{data_dir / 'zotero.sqlite'}: not a Zotero database this reader knows "
            f"(no table {', '.join(missing)})"
        )
    rows = _read_rows(conn, tables)
    selected = _selected_collections(conn, rows.collection_paths, collection) if collection else None
    for item_id, (key, type_name) in sorted(rows.items.items(), key=lambda kv: kv[1][0]):
        if type_name in NOT_PAPERS and not _standalone_attachment(rows, item_id, type_name):
            continue
        cids = rows.in_collections.get(item_id, [])
        if selected is not None and not selected.intersection(cids):
            continue
        fields = rows.values.get(item_id, {})
        title = " ".join(fields.get("title", "").split()) or key
        label = f"Zotero item {key} {title[:60]!r}"
        pdfs = [
            a
            for a in rows.attachments.get(item_id, [])
            if a[2] == "application/pdf" or a[3].lower().endswith(".pdf")
        ]
        if not pdfs:
            library.problems.append((label, "no PDF attachment; attach the PDF in Zotero to review it"))
            continue
        chosen, problem = _choose_pdf(data_dir, rows.items, pdfs)
        if chosen is None:
            library.problems.append((label, problem or "its PDF is a web link, not a file"))
            continue
        library.items.append(_zotero_item(rows, item_id, title, chosen))
    return library


def _unknown_schema(version: int | None) -> str:
    shown = "none" if version is None else str(version)
    return (
        f"unknown Zotero schema version {shown} (known: {KNOWN_SCHEMA.start}–"
        f"{KNOWN_SCHEMA.stop - 1}, Zotero 5–7); reading it anyway, check the imported titles"
    )


def _read_rows(conn, tables: set[str]) -> _Rows:
    deleted = (
        {r[0] for r in conn.execute("SELECT itemID FROM deletedItems")} if "deletedItems" in tables else set()
    )
    types = {
        type_id: _text(name) for type_id, name in conn.execute("SELECT itemTypeID, typeName FROM itemTypes")
    }
    items = {
        item_id: (_text(key), types.get(type_id, ""))
        for item_id, key, type_id in conn.execute("SELECT itemID, key, itemTypeID FROM items")
        if item_id not in deleted
    }
    in_collections: dict[int, list[int]] = {}
    for cid, item_id in conn.execute("SELECT collectionID, itemID FROM collectionItems"):
        in_collections.setdefault(item_id, []).append(cid)
    return _Rows(
        items=items,
        values=_field_values(conn),
        authors=_authors(conn, tables),
        collection_paths=_collection_paths(conn),
        in_collections=in_collections,
        attachments=_attachments(conn, items),
    )


def _field_values(conn) -> dict[int, dict[str, str]]:
    values: dict[int, dict[str, str]] = {}
    for item_id, name, value in conn.execute(
        "SELECT d.itemID, f.fieldName, v.value FROM itemData d "
        "JOIN fields f ON f.fieldID = d.fieldID JOIN itemDataValues v ON v.valueID = d.valueID"
    ):
        values.setdefault(item_id, {})[name] = _text(value)
    return values


def _authors(conn, tables: set[str]) -> dict[int, list[str]]:
    creator_type = (
        "JOIN creatorTypes t ON t.creatorTypeID = ic.creatorTypeID WHERE t.creatorType = 'author'"
        if "creatorTypes" in tables
        else ""
    )
    authors: dict[int, list[str]] = {}
    for item_id, first, last, mode in conn.execute(
        "SELECT ic.itemID, c.firstName, c.lastName, c.fieldMode FROM itemCreators ic "
        f"JOIN creators c ON c.creatorID = ic.creatorID {creator_type} "
        "ORDER BY ic.itemID, ic.orderIndex"
    ):
        first, last = _text(first), _text(last)
        name = last if mode == 1 else " ".join(p for p in (first, last) if p)
        if name.strip():
            authors.setdefault(item_id, []).append(" ".join(name.split()))
    return authors


def _attachments(conn, items: dict[int, tuple[str, str]]) -> dict[int, list[tuple[int, int, str, str]]]:
    attachments: dict[int, list[tuple[int, int, str, str]]] = {}
    for att_id, parent, mode, content_type, path in conn.execute(
        "SELECT itemID, parentItemID, linkMode, contentType, path FROM itemAttachments ORDER BY itemID"
    ):
        if att_id in items:
            # a top-level PDF (no parent item) stands for itself
            attachments.setdefault(parent if parent is not None else att_id, []).append(
                (att_id, mode, content_type or "", path or "")
            )
    return attachments


def _standalone_attachment(rows: _Rows, item_id: int, type_name: str) -> bool:
    return (
        type_name == "attachment"
        and item_id in rows.attachments
        and any(a[0] == item_id for a in rows.attachments[item_id])
    )


def _choose_pdf(
    data_dir: Path, items: dict[int, tuple[str, str]], pdfs: list[tuple[int, int, str, str]]
) -> tuple[tuple[Path, str] | None, str]:
    """The first PDF attachment whose file is there, as (file, attachment key), else None and
    why the last one with a file could not be used."""
    problem = ""
    for att_id, mode, _, path in pdfs:
        att_key = items[att_id][0]
        file = _attachment_file(data_dir, att_key, mode, path)
        if file is None:
            continue
        if path.startswith("attachments:"):
            problem = (
                f"the PDF is linked relative to Zotero's base directory "
                f"({path}); ingest the file itself with `reader ingest`"
            )
            continue
        if not file.is_file():
            problem = f"the PDF file is missing ({file}); let Zotero download or relink it, then run again"
            continue
        return (file, att_key), problem
    return None, problem


def _zotero_item(rows: _Rows, item_id: int, title: str, chosen: tuple[Path, str]) -> ZoteroItem:
    key, type_name = rows.items[item_id]
    fields = rows.values.get(item_id, {})
    extra = fields.get("extra", "")
    paths = rows.collection_paths
    return ZoteroItem(
        key=key,
        title=title,
        authors=rows.authors.get(item_id, []),
        year=_year(fields.get("date", "")),
        doi=(fields.get("DOI") or "").strip() or _doi_from_extra(extra),
        collections=sorted(
            {paths[c] for c in rows.in_collections.get(item_id, []) if c in paths}, key=str.lower
        ),
        item_type=type_name,
        citekey=(fields.get("citationKey") or "").strip() or _citekey_from_extra(extra),
        venue=fields.get("publicationTitle") or fields.get("proceedingsTitle") or "",
        pdf=chosen[0],
        attachment_key=chosen[1],
    )


def _doi_from_extra(extra: str) -> str | None:
    m = re.search(r"(?im)^\s*DOI\s*:\s*(10\.\S+)\s*$", extra or "")
    return m.group(1) if m else None
