"""`reader search` (evidence search over the library) and `reader reindex`."""

from __future__ import annotations

import click

from reader.commands.output import echo_json, for_terminal


def _path_label(name: str, rank, score) -> str:
    return f"{name} #{rank} ({score:.3f})" if rank is not None else f"{name} -"


@click.command("search")
@click.argument("query")
@click.option(
    "--paper",
    "paper_ref",
    metavar="PAPER",
    help="Search within this paper only (id, id prefix of 6+ characters, or as `reader papers` shows it).",
)
@click.option(
    "-k",
    "top_k",
    type=click.IntRange(1, 100),
    default=3,
    show_default=True,
    metavar="N",
    help="Passages taken from each path (BM25 and dense) before fusion.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print {"hits": [{chunk_id, paper_id, text, pages, section, score, bm25_rank, dense_rank}]}.',
)
@click.pass_obj
def search(app, query, paper_ref, top_k, as_json):
    """Find the passages that best match QUERY: BM25 and dense search, fused by reciprocal rank.

    \b
    Examples:
      reader search "baseline comparison"
      reader search "注意力机制" --paper 3fa2c1 -k 5
      reader search "citation graph" --json
    """
    found = app.search(query, paper=paper_ref, k=top_k)
    hits = found.hits
    if as_json:
        echo_json(found.to_json())
        return
    if not hits:
        click.echo("No passages found." + ("" if found.library_size else " The library is empty."))
        return
    for n, hit in enumerate(hits, start=1):
        where = f"p. {hit.pages}" + (f" · {hit.section}" if hit.section else "")
        paths = ", ".join(
            [
                _path_label("bm25", hit.bm25_rank, hit.bm25_score or 0.0),
                _path_label("dense", hit.dense_rank, hit.dense_score or 0.0),
            ]
        )
        click.secho(for_terminal(f"{n}. paper {hit.paper_id[:12]} · {where}"), bold=True)
        click.echo(f"   score {hit.score:.4f} · {paths} · chunk {hit.chunk_id}")
        text = " ".join(hit.text.split())
        click.echo("   " + for_terminal(text if len(text) <= 400 else text[:400] + "…"))


@click.command("reindex")
@click.pass_obj
def reindex(app):
    """Rebuild the search index (BM25 and dense vectors) from the chunks in the database.

    Needed only after changing READER_EMBED_MODEL by hand or to start afresh:
    ingest and `reader rm` keep the index up to date, and a missing or damaged
    index is rebuilt on its own.

    \b
    Example:
      READER_EMBED_MODEL=/models/bge-small-en-v1.5 reader reindex
    """
    done = app.library.reindex()
    click.echo(
        f"Indexed {done.chunks} chunks from {done.papers} papers in {done.seconds:.1f} s "
        f"(embedding model: {done.embedder})."
    )
