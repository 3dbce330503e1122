"""`reader import`: a DOI, an arXiv id or URL, or a RIS/BibTeX file brings a paper in; its
open-access PDF is fetched (arXiv; OpenAlex, Unpaywall for a DOI) only when services are allowed,
here from a loopback server in each API's documented shape."""

from __future__ import annotations

import shutil

import pytest
from conftest import SAMPLE_PAPER, make_reader
from loopback_import import ARXIV_ID, CLOSED_DOI, DOI, ImportServer

from reader.errors import ReaderError
from reader.ingest.identifiers import parse_identifier, read_bibfile


@pytest.fixture
def server():
    with ImportServer() as server:
        yield server


@pytest.fixture
def app(reader_env, monkeypatch):
    from reader.llm.dryrun import DryRunLLM

    monkeypatch.setenv("READER_OPENALEX_MAILTO", "me@example.org")
    return make_reader(llm=DryRunLLM())


def test_identifiers_are_read_from_dois_arxiv_ids_and_urls():
    assert parse_identifier("https://arxiv.org/abs/1706.03762v7").arxiv == "1706.03762v7"
    assert parse_identifier("arXiv:2004.07180").arxiv == "2004.07180"
    assert parse_identifier("https://doi.org/10.18653/v1/2020.acl-main.207").doi == DOI
    assert parse_identifier("doi:10.1371/journal.pone.0197919").doi == "10.1371/journal.pone.0197919"
    with pytest.raises(ReaderError, match="not a DOI"):
        parse_identifier("attention is all you need")


def test_an_arxiv_id_comes_in_with_its_pdf_and_metadata_and_is_reviewed(app, server):
    report = app.library.import_papers([f"arXiv:{ARXIV_ID}"], services="arxiv", base_urls=server.base_urls())
    [row] = report.rows
    assert (row.status, row.pdf, row.error) == ("ingested", f"{server.url}/pdf/{ARXIV_ID}v4", "")
    paper = app.paper(row.paper_id).info
    assert paper.title.startswith("SPECTER: Document-level Representation Learning")
    assert paper.year == 2020 and paper.authors[:2] == ["Arman Cohan", "Sergey Feldman"]
    assert server.requests[0] == ("/api/query", {"id_list": [ARXIV_ID], "max_results": ["1"]})
    kept = list((app.settings.home / "uploads").rglob("*.pdf"))  # kept as an upload is: its pages show
    assert [p.parent.name for p in kept] == [row.paper_id]
    reviewed = app.read(row.paper_id)  # end to end: from the identifier to a reviewed paper
    assert {k.kind for k in reviewed.analyses} == {"critique", "synthesis"}
    assert app.papers()[0].status == "analysed"


def test_a_doi_gets_its_open_access_pdf_from_unpaywall_when_openalex_has_none(app, server):
    [row] = app.library.import_papers([DOI], services="openalex,unpaywall", base_urls=server.base_urls()).rows
    assert row.pdf == f"{server.url}/pdf/specter.pdf" and row.status == "ingested"
    assert ("/v2/" + DOI, {"email": ["me@example.org"]}) in server.requests
    from reader.store.tables import Paper

    with app.services.db() as session:
        assert session.get(Paper, row.paper_id).doi == DOI


def test_without_a_pdf_the_title_and_abstract_are_stored_and_said_so(app, server):
    [row] = app.library.import_papers([CLOSED_DOI], services="crossref", base_urls=server.base_urls()).rows
    assert row.status == "ingested" and row.pdf == "metadata"
    assert "no open-access PDF was found" in row.notes[-1]
    assert app.paper(row.paper_id).info.title == "A Closed Paper About Wheat Yields"
    server.pdf_is_html = True  # a landing page where a PDF was promised: the metadata all the same
    [row] = app.library.import_papers(
        [f"arXiv:{ARXIV_ID}"], services="arxiv", base_urls=server.base_urls()
    ).rows
    assert row.pdf == "metadata" and any("not a PDF" in n for n in row.notes)
    [row] = app.library.import_papers(
        ["10.1000/nobody.knows"], services="crossref", base_urls=server.base_urls()
    ).rows
    assert row.status == "error" and "crossref: no work with the DOI 10.1000/nobody.knows" in row.error


def test_off_the_network_by_default(app, server, tmp_path):
    [row] = app.library.import_papers([DOI]).rows
    assert row.status == "error" and "the network, which is off" in row.error
    assert server.requests == []
    shutil.copy(SAMPLE_PAPER, tmp_path / "sample.pdf")
    (tmp_path / "refs.bib").write_text(
        """@article{sample2024,
  title = {A {Sample} Paper With a Local File},
  author = {Doe, Jane and Roe, Richard},
  year = 2024,
  doi = {10.1000/sample.2024},
  file = {Full Text:sample.pdf:application/pdf},
}
@inproceedings{only_metadata,
  title = "Heat Stress and Wheat Yield",
  author = "Lee, Ann",
  year = {2019},
  abstract = {Heat lowers wheat yield by a third.},
}
""",
        encoding="utf-8",
    )
    rows = app.library.import_papers([tmp_path / "refs.bib"]).rows
    assert [(r.status, r.pdf) for r in rows] == [("ingested", "file"), ("ingested", "metadata")]
    local = app.paper(rows[0].paper_id).info
    assert (local.title, local.year, local.authors) == (
        "A Sample Paper With a Local File",
        2024,
        ["Doe, Jane", "Roe, Richard"],
    )
    assert server.requests == []


def test_a_ris_file_is_read(tmp_path):
    (tmp_path / "refs.ris").write_text(
        "TY  - JOUR\nTI  - Heat Stress and Wheat Yield\nAU  - Lee, Ann\nAU  - Park, Sun\nPY  - 2019\n"
        "DO  - 10.1000/heat.2019\nAB  - Heat lowers wheat yield.\nER  - \n"
        "TY  - CONF\nT1  - Attention Is All You Need\nUR  - https://arxiv.org/abs/1706.03762\nER  - \n",
        encoding="utf-8",
    )
    first, second = read_bibfile(tmp_path / "refs.ris")
    assert (first.title, first.authors, first.year, first.doi) == (
        "Heat Stress and Wheat Yield",
        ["Lee, Ann", "Park, Sun"],
        2019,
        "10.1000/heat.2019",
    )
    assert second.arxiv == "1706.03762"
    (tmp_path / "empty.bib").write_text("nothing here", encoding="utf-8")
    with pytest.raises(ReaderError, match="no BibTeX"):
        read_bibfile(tmp_path / "empty.bib")
