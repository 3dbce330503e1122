"""The paper page's figures (templates/_figures.html): each with its label, page and caption, and
its picture served from the database (/paper/<id>/figure/<n>.png)."""

from __future__ import annotations

from figure_pdf import CAPTION_2, make_figure_pdf
from test_web import client_for  # noqa: F401 - the fixture
from test_web_paper_small import Elements


def test_the_page_lists_each_figure_with_its_picture(app, client_for, tmp_path):  # noqa: F811
    (result,) = app.ingest([make_figure_pdf(tmp_path / "figures.pdf")])
    client = client_for()
    html = client.get(f"/paper/{result.paper_id}").text
    assert 'id="figures"' in html and "Figures (2)" in html and CAPTION_2 in html
    section = html.split('id="figures"', 1)[1].split("</section>", 1)[0]
    images = [a for t, a in Elements(section).tags if t == "img"]
    assert [a["alt"] for a in images] == ["Figure 1", "Figure 2"]
    picture = client.get(images[1]["src"])
    assert picture.status_code == 200 and picture.headers["content-type"] == "image/png"
    assert picture.content.startswith(b"\x89PNG")
    assert client.get(f"/paper/{result.paper_id}/figure/3.png").status_code == 404


def test_a_paper_without_figures_has_no_figures_section(app, client_for, tmp_path):  # noqa: F811
    path = tmp_path / "plain.txt"
    path.write_text(
        "A Title\n\nOne paragraph of text about nothing in particular, long enough.\n", encoding="utf-8"
    )
    (result,) = app.ingest([path])
    assert 'id="figures"' not in client_for().get(f"/paper/{result.paper_id}").text


def test_the_single_note_has_its_figures_and_its_zip_carries_the_pictures(app, client_for, tmp_path):  # noqa: F811
    import io
    import zipfile

    from test_export import add_analysis

    (result,) = app.ingest([make_figure_pdf(tmp_path / "figures.pdf")])
    client = client_for()
    unread = client.get(f"/paper/{result.paper_id}/note.zip")
    assert unread.status_code == 400 and "has no review yet, so there is no note" in unread.text
    add_analysis(
        app.services.db, result.paper_id, "synthesis", [("The paper draws two figures.", "supported")]
    )
    note = client.get(f"/paper/{result.paper_id}/note.md").text
    assert "## Figures" in note and CAPTION_2 in note
    html = client.get(f"/paper/{result.paper_id}").text
    assert f'href="/paper/{result.paper_id}/note.zip"' in html
    reply = client.get(f"/paper/{result.paper_id}/note.zip")
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(reply.content)).namelist()
    pictures = [n for n in names if n.endswith(".png")]
    assert len(pictures) == 2 and any(n.endswith(".md") and "index" not in n for n in names)
    for picture in pictures:  # the note's picture links name the files the zip carries
        assert picture.split("/")[-1] in note
    library = zipfile.ZipFile(io.BytesIO(client.get("/library/notes.zip").content)).namelist()
    assert sorted(n for n in library if n.endswith(".png")) == sorted(pictures)
