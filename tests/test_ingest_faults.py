"""Faults during ingest (issue 15): control characters in parsed text, a database
error on one file, a full disk under the index or the database, and file names
with a newline. Each fault costs at most the one file it hit, is reported in one
line, and leaves the database and the last good search index usable."""

import errno
import json
import os
import re
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pymupdf
import pytest
from click.testing import CliRunner
from sqlalchemy import event, func, select
from sqlalchemy.exc import DataError, OperationalError

from conftest import SAMPLE_PAPER
from reader.index import dense
from reader.index.dense import HashingEmbedder
from reader.index.store import SearchIndex
from reader.ingest import pdf as pdf_module
from reader.ingest import pipeline
from reader.ingest.pdf import parse_pdf
from reader.ingest.pipeline import ingest_file, ingest_paths
from reader.ingest.text import parse_text
from reader.store.tables import Caption, Chunk, Paper, Reference

# What may not be stored: C0 controls other than \t and \n, DEL, lone surrogates.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")
DISK_FULL = re.compile(r"the disk is full: \d+ MB needed under READER_HOME")


def one_line(text: str, limit: int = 400) -> bool:
    return bool(text) and "\n" not in text and len(text) <= limit


def paper_count(db) -> int:
    with db() as s:
        return s.scalar(select(func.count()).select_from(Paper))


def make_pdf_with_controls(path: Path) -> None:
    """A PDF whose text layer holds NUL and other C0 characters, as some real papers' do."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Graphs\x00 with\x03 controls\x1f inside", fontsize=16)
    page.insert_text((72, 120), "Every edge p1 \x00! p2 joins two papers, and\x0b the text goes on for a while.",
                     fontsize=10)
    page.insert_text((72, 140), "Table 1:\x01 Results\x00 of the control run.", fontsize=10)
    doc.save(path)


def all_stored_text(db) -> list[str]:
    with db() as s:
        texts = [t for (t,) in s.execute(select(Chunk.text))]
        texts += [t for row in s.execute(select(Caption.label, Caption.text)) for t in row]
        texts += [t for row in s.execute(select(Reference.marker, Reference.text)) for t in row]
        for paper in s.scalars(select(Paper)):
            texts += [paper.title, paper.abstract, *paper.authors, *(x["title"] for x in paper.sections)]
    return texts


# ------------------------------------------------------------ control characters

def test_pdf_text_leaves_the_parser_without_control_characters(tmp_path, monkeypatch):
    path = tmp_path / "controls.pdf"
    make_pdf_with_controls(path)
    assert "\x00" in pymupdf.open(path)[0].get_text()  # the fixture does hold them
    for fast in (True, False):  # the fast extraction and the "dict" fallback
        if not fast:
            monkeypatch.setattr(pdf_module, "_boxes_fast", lambda *args: None)
        parsed = parse_pdf(path)
        texts = [parsed.title, parsed.abstract, *parsed.authors, *(b.text for b in parsed.blocks),
                 *(c.text for c in parsed.captions), *(r.text for r in parsed.references)]
        assert not any(CONTROL.search(t) for t in texts), [t for t in texts if CONTROL.search(t)]
        assert parsed.title.startswith("Graphs with controls inside")
        assert any("p1 ! p2 joins" in b.text for b in parsed.blocks)


def test_text_files_lose_control_characters_but_keep_tabs_newlines_and_pages(tmp_path):
    path = tmp_path / "notes.txt"
    # NUL only after the first 4 KB (earlier it means a binary file), a form feed between pages
    path.write_text("Control Notes\n\n" + "words " * 800 + "\n\nA\x00 tab\there\x07.\n\x0cSecond\x1b page.\n")
    parsed = parse_text(path)
    texts = [parsed.title, *(b.text for b in parsed.blocks)]
    assert not any(CONTROL.search(t) for t in texts)
    assert parsed.pages == 2
    assert any("A tab\there." in t for t in texts) and any("Second page." in t for t in texts)


def test_clean_text_keeps_tabs_and_newlines_and_drops_the_rest():
    from reader.ingest.text import clean_text

    assert clean_text("a\x00b\tc\nd\x0be\x7ff\ud800g\udcffh\r") == "ab\tc\ndefgh"
    assert clean_text("plain text, ü and 中文") == "plain text, ü and 中文"


def test_controls_never_reach_the_database(tmp_path, db):
    path = tmp_path / "controls.pdf"
    make_pdf_with_controls(path)
    result = ingest_file(path, db)
    assert result.status == "ingested", result.error
    assert not any(CONTROL.search(t) for t in all_stored_text(db))
