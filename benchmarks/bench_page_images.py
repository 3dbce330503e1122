"""Page images of the web page's PDF view: first render (pymupdf, PNG at RENDER_ZOOM) and
cached fetch, through FastAPI's test client, plus passage rectangles at ingest.

    .venv/bin/python -m benchmarks.bench_page_images [PDF ...]   # default: ../shared/papers, else the sample

Prints per-page render times (median, p95, max), the cached fetch median, the cache's size
per page, and what finding the passages' rectangles adds to ingest; for the viewer's text
layer and search (reader/web/page_text.py): a paper's words read the first time (every page,
in a render worker), a page's words once kept, and a search over the paper.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    from fastapi.testclient import TestClient

    from reader.config import load_settings
    from reader.facade import Reader
    from reader.index.dense import HashingEmbedder
    from reader.ingest.chunk import chunk_paper
    from reader.ingest.pages import passage_rects
    from reader.ingest.pdf import parse_pdf
    from reader.web.app import create_app

    pdfs = (
        [Path(p) for p in argv]
        or sorted((ROOT.parent / "shared" / "papers").glob("*.pdf"))
        or [ROOT / "papers" / "sample_paper.pdf"]
    )
    first, cached, sizes, parse_s, rects_s = [], [], [], 0.0, 0.0
    words_first, words_kept, words_sizes, searches = [], [], [], []
    with tempfile.TemporaryDirectory() as home:
        # READER_WORKERS: the server reviews nothing itself
        ctx = Reader(load_settings({"READER_HOME": home, "READER_WORKERS": "on"}), embedder=HashingEmbedder())
        with TestClient(create_app(ctx)) as client:
            for pdf in pdfs:
                data = pdf.read_bytes()
                started = time.perf_counter()
                chunks = chunk_paper(parse_pdf(pdf, data))
                parse_s += time.perf_counter() - started
                started = time.perf_counter()
                passage_rects(data, [(c.page_start, c.page_end, c.text) for c in chunks])
                rects_s += time.perf_counter() - started
                [result] = ctx.ingest([pdf])
                pid = result.paper_id
                for page in range(1, result.pages + 1):
                    url = f"/paper/{pid}/page/{page}.png"
                    started = time.perf_counter()
                    response = client.get(url)
                    first.append(time.perf_counter() - started)
                    assert response.status_code == 200, (pdf, page, response.status_code)
                    sizes.append(len(response.content))
                    started = time.perf_counter()
                    client.get(url)
                    cached.append(time.perf_counter() - started)
                for page in range(1, result.pages + 1):
                    started = time.perf_counter()
                    response = client.get(f"/api/paper/{pid}/page/{page}/words")
                    (words_kept if page > 1 else words_first).append(time.perf_counter() - started)
                    assert response.status_code == 200, (pdf, page, response.status_code)
                    words_sizes.append(len(response.content))
                for query in ("the", "model", "results show"):
                    started = time.perf_counter()
                    assert client.get(f"/api/paper/{pid}/search", params={"q": query}).status_code == 200
                    searches.append(time.perf_counter() - started)
    ms = sorted(x * 1000 for x in first)
    print(f"{len(pdfs)} PDFs, {len(ms)} pages")
    print(
        f"first render: median {statistics.median(ms):.0f} ms, p95 {ms[int(0.95 * (len(ms) - 1))]:.0f} ms, "
        f"max {ms[-1]:.0f} ms"
    )
    print(f"cached:       median {statistics.median(cached) * 1000:.1f} ms")
    print(
        f"cache size:   median {statistics.median(sizes) / 1024:.0f} KB a page, "
        f"{sum(sizes) / 1024 / 1024:.1f} MB in all"
    )
    print(
        f"ingest: parse + passages {parse_s:.2f} s, rectangles {rects_s:.2f} s "
        f"(+{100 * rects_s / parse_s:.0f}%)"
    )
    words_ms = sorted(x * 1000 for x in words_first)
    print(
        f"words, first read (all pages): median {statistics.median(words_ms):.0f} ms, max {words_ms[-1]:.0f} ms; "
        f"a page's once kept: median {statistics.median(words_kept) * 1000:.1f} ms, "
        f"{statistics.median(words_sizes) / 1024:.0f} KB"
    )
    search_ms = sorted(x * 1000 for x in searches)
    print(f"search in a paper: median {statistics.median(search_ms):.0f} ms, max {search_ms[-1]:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
