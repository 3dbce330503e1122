"""A small Zotero data directory for tests: zotero.sqlite with the tables and columns
reader.ingest.zotero reads (names as in Zotero's userdata.sql), and storage/<KEY>/ folders."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

SCHEMA = """
CREATE TABLE version (schema TEXT PRIMARY KEY, version INT NOT NULL);
CREATE TABLE settings (setting TEXT, key TEXT, value, PRIMARY KEY (setting, key));
CREATE TABLE itemTypes (itemTypeID INTEGER PRIMARY KEY, typeName TEXT, templateItemTypeID INT, display INT);
CREATE TABLE fields (fieldID INTEGER PRIMARY KEY, fieldName TEXT, fieldFormatID INT);
CREATE TABLE items (itemID INTEGER PRIMARY KEY, itemTypeID INT NOT NULL,
    dateAdded TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, dateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, libraryID INT NOT NULL, key TEXT NOT NULL,
    version INT NOT NULL DEFAULT 0, synced INT NOT NULL DEFAULT 0, UNIQUE (libraryID, key));
CREATE TABLE itemDataValues (valueID INTEGER PRIMARY KEY, value UNIQUE);
CREATE TABLE itemData (itemID INT, fieldID INT, valueID, PRIMARY KEY (itemID, fieldID));
CREATE TABLE creatorTypes (creatorTypeID INTEGER PRIMARY KEY, creatorType TEXT);
CREATE TABLE creators (creatorID INTEGER PRIMARY KEY, firstName TEXT, lastName TEXT, fieldMode INT,
    UNIQUE (lastName, firstName, fieldMode));
CREATE TABLE itemCreators (itemID INT NOT NULL, creatorID INT NOT NULL, creatorTypeID INT NOT NULL DEFAULT 1,
    orderIndex INT NOT NULL DEFAULT 0, PRIMARY KEY (itemID, creatorID, creatorTypeID, orderIndex));
CREATE TABLE collections (collectionID INTEGER PRIMARY KEY, collectionName TEXT NOT NULL,
    parentCollectionID INT DEFAULT NULL, clientDateModified TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    libraryID INT NOT NULL, key TEXT NOT NULL, version INT NOT NULL DEFAULT 0, synced INT NOT NULL DEFAULT 0,
    UNIQUE (libraryID, key));
CREATE TABLE collectionItems (collectionID INT NOT NULL, itemID INT NOT NULL, orderIndex INT NOT NULL DEFAULT 0,
    PRIMARY KEY (collectionID, itemID));
CREATE TABLE itemAttachments (itemID INTEGER PRIMARY KEY, parentItemID INT, linkMode INT, contentType TEXT,
    charsetID INT, path TEXT, syncState INT DEFAULT 0, storageModTime INT, storageHash TEXT,
    lastProcessedModificationTime INT);
CREATE TABLE deletedItems (itemID INTEGER PRIMARY KEY, dateDeleted DEFAULT CURRENT_TIMESTAMP NOT NULL);
"""

TYPES = {1: "attachment", 2: "note", 3: "journalArticle", 4: "conferencePaper", 5: "book"}
FIELDS = {1: "title", 2: "date", 3: "DOI", 4: "extra", 5: "publicationTitle", 6: "proceedingsTitle"}


class ZoteroBuilder:
    def __init__(self, data_dir: Path, schema_version: int = 124):
        self.data_dir = data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(data_dir / "zotero.sqlite")
        self.conn.executescript(SCHEMA)
        self.conn.execute("INSERT INTO version VALUES ('userdata', ?)", (schema_version,))
        self.conn.executemany("INSERT INTO itemTypes (itemTypeID, typeName) VALUES (?, ?)", TYPES.items())
        self.conn.executemany("INSERT INTO fields (fieldID, fieldName) VALUES (?, ?)", FIELDS.items())
        self.conn.executemany("INSERT INTO creatorTypes VALUES (?, ?)", [(1, "author"), (2, "editor")])
        self.next_id = 1

    def _value(self, value: str) -> int:
        row = self.conn.execute("SELECT valueID FROM itemDataValues WHERE value = ?", (value,)).fetchone()
        if row:
            return row[0]
        return self.conn.execute("INSERT INTO itemDataValues (value) VALUES (?)", (value,)).lastrowid

    def item(self, key: str, type_name: str, fields: dict | None = None, authors=(), editors=()) -> int:
        type_id = next(i for i, n in TYPES.items() if n == type_name)
        item_id = self.conn.execute(
            "INSERT INTO items (itemTypeID, libraryID, key) VALUES (?, 1, ?)", (type_id, key)
        ).lastrowid
        names = {v: k for k, v in FIELDS.items()}
        for name, value in (fields or {}).items():
            self.conn.execute(
                "INSERT INTO itemData VALUES (?, ?, ?)", (item_id, names[name], self._value(value))
            )
        for order, (creators, creator_type) in enumerate(((authors, 1), (editors, 2))):
            for i, (first, last) in enumerate(creators):
                mode = 1 if first is None else 0
                self.conn.execute(
                    "INSERT OR IGNORE INTO creators (firstName, lastName, fieldMode) VALUES (?, ?, ?)",
                    (first or "", last, mode),
                )
                cid = self.conn.execute(
                    "SELECT creatorID FROM creators WHERE firstName = ? AND lastName = ? AND fieldMode = ?",
                    (first or "", last, mode),
                ).fetchone()[0]
                self.conn.execute(
                    "INSERT INTO itemCreators VALUES (?, ?, ?, ?)",
                    (item_id, cid, creator_type, order * 100 + i),
                )
        return item_id

    def collection(self, name: str, key: str, parent: int | None = None) -> int:
        return self.conn.execute(
            "INSERT INTO collections (collectionName, parentCollectionID, libraryID, key) "
            "VALUES (?, ?, 1, ?)",
            (name, parent, key),
        ).lastrowid

    def add_to(self, collection_id: int, item_id: int) -> None:
        self.conn.execute(
            "INSERT INTO collectionItems (collectionID, itemID) VALUES (?, ?)", (collection_id, item_id)
        )

    def stored_pdf(self, parent: int | None, key: str, source: Path, name: str = "paper.pdf") -> int:
        """An attachment Zotero stored itself: storage/<key>/<name>, path 'storage:<name>'."""
        att = self.item(key, "attachment", {"title": "Full Text PDF"})
        folder = self.data_dir / "storage" / key
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, folder / name)
        self.conn.execute(
            "INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path) "
            "VALUES (?, ?, 0, 'application/pdf', ?)",
            (att, parent, f"storage:{name}"),
        )
        return att

    def linked_pdf(self, parent: int, key: str, path: str) -> int:
        att = self.item(key, "attachment", {"title": "Linked PDF"})
        self.conn.execute(
            "INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path) "
            "VALUES (?, ?, 2, 'application/pdf', ?)",
            (att, parent, path),
        )
        return att

    def web_link(self, parent: int, key: str) -> int:
        att = self.item(key, "attachment", {"title": "Snapshot"})
        self.conn.execute(
            "INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path) "
            "VALUES (?, ?, 3, 'text/html', NULL)",
            (att, parent),
        )
        return att

    def delete(self, item_id: int) -> None:
        self.conn.execute("INSERT INTO deletedItems (itemID) VALUES (?)", (item_id,))

    def close(self) -> None:
        self.conn.commit()
        self.conn.close()


def build_library(data_dir: Path, pdf_one: Path, pdf_two: Path, schema_version: int = 124) -> dict:
    """Two items with stored PDFs in "Thesis" (one in its subcollection "Chapter 2"), a book
    without a PDF, an article whose linked PDF is missing, one with only a web link, a note
    and a deleted item. Returns the item keys."""
    z = ZoteroBuilder(data_dir, schema_version)
    thesis = z.collection("Thesis", "COLTHES1")
    chapter = z.collection("Chapter 2", "COLCHAP2", parent=thesis)
    other = z.collection("Other", "COLOTHR3")
    one = z.item(
        "ABCD2345",
        "journalArticle",
        {
            "title": "Redundancy in Sparse Extraction",
            "date": "2007-06-00 June 2007",
            "DOI": "10.1234/zot.one",
            "publicationTitle": "Proceedings of the ACL",
        },
        authors=[("Doug", "Downey"), ("Stefan", "Schoenmackers"), ("Oren", "Etzioni")],
    )
    z.add_to(thesis, one)
    z.stored_pdf(one, "EFGH6789", pdf_one, "Downey - 2007 - Sparse.pdf")
    two = z.item(
        "IJKL2345",
        "conferencePaper",
        {
            "title": "A Fast Alignment Model",
            "date": "2012",
            "extra": "Citation Key: dyer2012Fast\nOriginal Date: 2012",
        },
        authors=[("Chris", "Dyer")],
        editors=[("Ed", "Itor")],
    )
    z.add_to(chapter, two)
    z.stored_pdf(two, "MNOP6789", pdf_two, "dyer12.pdf")
    book = z.item(
        "QRST2345",
        "book",
        {"title": "A Book Without a PDF", "date": "1999"},
        authors=[(None, "Some Organisation")],
    )
    z.add_to(thesis, book)
    missing = z.item("UVWX2345", "journalArticle", {"title": "Linked But Moved", "date": "2020"})
    z.add_to(other, missing)
    z.linked_pdf(missing, "YZAB2345", str(data_dir / "elsewhere" / "moved.pdf"))
    web = z.item("CDEF2345", "journalArticle", {"title": "Only a Snapshot", "date": "2021"})
    z.add_to(other, web)
    z.web_link(web, "GHIJ2345")
    z.item("KLMN2345", "note")
    gone = z.item("OPQR2345", "journalArticle", {"title": "In the Trash", "date": "2010"})
    z.add_to(thesis, gone)
    z.stored_pdf(gone, "STUV2345", pdf_one, "trash.pdf")
    z.delete(gone)
    z.close()
    return {
        "one": "ABCD2345",
        "two": "IJKL2345",
        "book": "QRST2345",
        "missing": "UVWX2345",
        "web": "CDEF2345",
    }
