"""The Python API: one Reader built from keyword arguments, every method returning a result
whose to_json() is plain JSON, and a user's own LLM object used, logged and cached."""

from __future__ import annotations

import json

import pytest

from reader.errors import PaperNotFound, ReaderError
from reader.index.dense import HashingEmbedder
from reader.llm.base import Completion
from reader.llm.dryrun import DryRunLLM

PAPER = (
    "# SPARTA: sparse retrieval for long documents\n\n## Introduction\n\n"
    "We introduce SPARTA, a sparse retriever for long scientific documents. "
    "On the LongDocs benchmark SPARTA reaches a recall of 81.2% at ten passages. "
    "The model is trained on two million query and passage pairs drawn from PubMed.\n\n"
    "## Limitations\n\nSPARTA was only evaluated on English papers.\n"
)


class OwnLLM:
    """A client of the user's own: just `model` and `complete()`, nothing else of reader's."""

    model = "own-client"

    def __init__(self):
        self.inner = DryRunLLM()
        self.calls = 0

    def complete(self, messages, *, temperature=0.0, max_tokens=512, stage="", paper_id=None):
        self.calls += 1
        answer = self.inner.complete(
            messages, temperature=temperature, max_tokens=max_tokens, stage=stage, paper_id=paper_id
        )
        return Completion(
            text=answer.text, prompt_tokens=answer.prompt_tokens, completion_tokens=answer.completion_tokens
        )


@pytest.fixture
def reader(tmp_path, reader_env, migrated_copy):
    from reader import Reader

    return Reader(
        home=tmp_path / "home",
        database_url=migrated_copy(tmp_path / "lib.db"),
        llm=OwnLLM(),
        embedder=HashingEmbedder(),
        use_cache=True,
    )


def as_json(result) -> dict | list:
    return json.loads(json.dumps(result.to_json(), ensure_ascii=False))


def test_keyword_arguments_choose_home_and_database(reader, tmp_path):
    assert reader.settings.home == tmp_path / "home"
    assert reader.settings.database_url == f"sqlite:///{tmp_path / 'lib.db'}"
    reader.papers()
    assert (tmp_path / "lib.db").is_file()


def test_every_method_round_trip(reader, tmp_path):
    paper = tmp_path / "sparta.md"
    paper.write_text(PAPER, encoding="utf-8")

    [ingested] = reader.ingest([paper])
    assert as_json(ingested)["status"] == "ingested"
    pid = ingested.paper_id
    assert [p.id for p in reader.papers()] == [pid]
    assert reader.paper("SPARTA").id == pid  # title prefix

    found = reader.search("recall on LongDocs", paper=pid, k=2)
    assert "81.2%" in " ".join(h["text"] for h in as_json(found)["hits"])

    read = reader.read(pid)
    assert {a["kind"] for a in as_json(read)["analyses"]} == {"critique", "synthesis"}
    assert [a["kind"] for a in as_json(reader.paper(pid).analyses())["analyses"]]

    report = reader.audit("SPARTA was tested on 40 hospital records from Brazil.", pid)
    assert as_json(report)["n_flagged"] == 1
    assert report.marked_text.startswith("[待验证] ")

    answer = reader.ask("What recall does SPARTA reach on LongDocs?", paper=pid)
    assert "81.2" in as_json(answer)["answer"]

    review = reader.review([paper])  # already read above: skipped, not read again
    assert [row["status"] for row in as_json(review)["papers"]] == ["skipped"]

    notes = reader.export(tmp_path / "notes")
    assert len(as_json(notes)["notes"]) == 1

    stats = as_json(reader.stats())
    own_calls = reader.services.generator.inner.calls
    assert own_calls > 0 and stats["total"]["calls"] >= own_calls  # the user's client is logged
    assert {row["key"] for row in stats["by_model"]} == {"generator / own-client", "verifier / own-client"}

    removed = reader.remove(pid)
    assert removed.id == pid and reader.papers() == []
    with pytest.raises(PaperNotFound):
        reader.paper(pid)


def test_clear_errors(reader):
    with pytest.raises(ReaderError, match="query is empty"):
        reader.search("  ")
    with pytest.raises(ReaderError, match="library is empty"):
        reader.ask("Anything?")
    with pytest.raises(ReaderError, match="no .pdf, .txt or .md files"):
        reader.review([])


def test_the_surface_stays_small():
    """Reader keeps the everyday calls; the rest belongs on the objects it hands out."""
    from reader import Reader

    public = [name for name in vars(Reader) if not name.startswith("_")]
    assert len(public) <= 20, public


def test_removing_a_paper_takes_its_page_images_and_uploads(reader, tmp_path):
    """One delete for `reader rm` and the web page's Delete: the rows, the page images and the
    uploaded copy go together."""
    paper = tmp_path / "sparta.md"
    paper.write_text(PAPER, encoding="utf-8")
    [ingested] = reader.ingest([paper])
    pid = ingested.paper_id
    home = reader.settings.home
    pages, uploads = home / "pages" / pid, home / "uploads" / pid
    for folder in (pages, uploads):
        folder.mkdir(parents=True)
    (pages / "1.png").write_bytes(b"png")
    (uploads / "sparta.pdf").write_bytes(b"pdf")

    assert reader.remove(pid).id == pid  # what `reader rm` and the web page's Delete call
    assert reader.papers() == [] and not pages.exists() and not uploads.exists()
