"""Scholarly search adapters against a loopback server in each API's documented shape,
and their failures ending in a note in the answer, never a crash."""

import socket

import pytest
from crag_fakes import PAPER_A, TITLES, CragLLM, FakeSearch, always_grounded
from loopback_scholarly import ScholarlyServer

from reader.crag.pipeline import ask
from reader.crag.scholarly import (
    Arxiv,
    ExternalSearchError,
    OpenAlex,
    SemanticScholar,
    abstract_from_inverted_index,
    scholarly_searches,
)
from reader.llm.scripted import ScriptedLLM


@pytest.fixture
def server():
    with ScholarlyServer() as server:
        yield server


def adapters(server, **kw):
    return {
        "s2": SemanticScholar(base_url=server.url, **kw.get("s2", {})),
        "arxiv": Arxiv(base_url=server.url),
        "openalex": OpenAlex(base_url=server.url),
    }


def test_semantic_scholar_reads_title_abstract_year_and_link(server):
    hits = SemanticScholar(base_url=server.url).search("attention", limit=3)
    assert [(h.source, h.title, h.year, h.url) for h in hits] == [
        (
            "semantic-scholar",
            "Attention Is All You Need",
            2017,
            "https://www.semanticscholar.org/paper/649def34",
        ),
        (
            "semantic-scholar",
            "A paper without an abstract",
            2020,
            "https://www.semanticscholar.org/paper/0123",
        ),
    ]
    assert hits[0].text.startswith("Attention Is All You Need (2017). The dominant sequence")
    assert hits[1].text == ""  # no abstract: nothing to grade (external_candidates skips it)
    query = server.requests[-1]["query"]
    assert query["query"] == ["attention"] and query["limit"] == ["3"] and "abstract" in query["fields"][0]
    assert "x-api-key" not in {k.lower() for k in server.requests[-1]["headers"]}


def test_semantic_scholar_sends_the_optional_key(server):
    SemanticScholar(base_url=server.url, api_key="k-123").search("attention")
    assert {k.lower(): v for k, v in server.requests[-1]["headers"].items()}["x-api-key"] == "k-123"


def test_arxiv_reads_the_atom_feed(server):
    [hit] = Arxiv(base_url=server.url).search("transformer", limit=2)
    assert (hit.title, hit.year, hit.url) == (
        "Attention Is All You Need",
        2017,
        "http://arxiv.org/abs/1706.03762v7",
    )
    assert "the Transformer, based solely on attention" in hit.text
    assert server.requests[-1]["query"]["search_query"] == ["all:transformer"]
    assert server.requests[-1]["query"]["max_results"] == ["2"]


def test_openalex_rebuilds_the_abstract_from_its_inverted_index(server):
    [hit] = OpenAlex(base_url=server.url, mailto="me@example.org").search("transformer")
    assert hit.text == "Attention Is All You Need (2017). The Transformer uses attention only."
    assert hit.url == "https://doi.org/10.48550/arxiv.1706.03762"
    assert server.requests[-1]["query"]["mailto"] == ["me@example.org"]
    assert abstract_from_inverted_index({"b": [1], "a": [0, 2]}) == "a b a"
    assert abstract_from_inverted_index(None) == ""


@pytest.mark.parametrize("service", ["s2", "arxiv", "openalex"])
def test_a_short_retry_after_is_waited_for_once(server, service):
    server.mode[service], server.retry_after = "429", "2"
    adapter = adapters(server)[service]
    waits = []
    adapter.sleep = waits.append
    assert adapter.search("attention")
    assert waits == [2.0]


@pytest.mark.parametrize(
    "mode, retry_after, message",
    [
        ("429", "120", "rate limited (HTTP 429); it asks to retry after 120 s"),
        ("429", "Wed, 21 Oct 2026 07:28:00 GMT", "rate limited (HTTP 429)"),
        ("500", "", "HTTP 500"),
        ("malformed", "", "not"),
    ],
)
@pytest.mark.parametrize("service", ["s2", "arxiv", "openalex"])
def test_failures_are_one_clear_line_naming_the_service(server, service, mode, retry_after, message):
    server.mode[service], server.retry_after, server.throttle = mode, retry_after, 5
    adapter = adapters(server)[service]
    adapter.sleep = lambda s: pytest.fail("a long or undated Retry-After must not be waited for")
    with pytest.raises(ExternalSearchError) as caught:
        adapter.search("attention")
    assert str(caught.value).startswith(adapter.name + ": ") and message in str(caught.value)


def test_a_slow_service_times_out(server):
    server.mode["openalex"], server.delay_s = "slow", 1.0
    with pytest.raises(ExternalSearchError, match=r"openalex: no reply within 0.2 s"):
        OpenAlex(base_url=server.url, timeout_s=0.2).search("x")


def test_an_unreachable_service_is_named():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(ExternalSearchError, match=r"arxiv: cannot reach http://127.0.0.1:\d+"):
        Arxiv(base_url=f"http://127.0.0.1:{port}").search("x")


def test_adapters_are_chosen_by_name():
    assert scholarly_searches("") == [] and scholarly_searches("off") == []
    names = [a.name for a in scholarly_searches("arxiv, OpenAlex,arxiv", mailto="m@x.org")]
    assert names == ["arxiv", "openalex"]
    with pytest.raises(ExternalSearchError, match="unknown external search scholar: use one or more of"):
        scholarly_searches("arxiv,scholar")


# -- in the question pipeline ---------------------------------------------------------------

QUESTION = "Which attention mechanism does the Transformer use?"  # nothing in the fake library


def run(external):
    llm = CragLLM(relevant_words=["attention"], answer="The Transformer relies on attention alone [1].")
    result = ask(
        QUESTION,
        paper_id=PAPER_A,
        generator=llm,
        verifier=ScriptedLLM(lambda p: "[1] YES"),
        search=FakeSearch(),
        check_grounded=always_grounded,
        titles=TITLES,
        external=external,
    )
    return result, llm


def test_external_hits_are_graded_and_labelled_external(server):
    result, llm = run(
        scholarly_searches("arxiv,openalex", base_urls={"arxiv": server.url, "openalex": server.url})
    )
    assert result.fallback_used and not result.not_found
    assert result.sources and all(s.external and s.paper_id is None and not s.pages for s in result.sources)
    labels = [s["label"] for s in result.to_json()["sources"]]
    assert any(label.startswith("[external: arxiv] Attention Is All You Need, 2017") for label in labels)
    answer_prompt = next(c["prompt"] for c in llm.history if c["stage"] == "crag-answer")
    assert "(external source, not in the library)" in answer_prompt
    assert "Say which evidence comes from another paper or an external source" in answer_prompt


def test_a_failing_service_is_a_note_and_the_others_still_count(server):
    server.mode["s2"], server.throttle = "429", 5
    server.retry_after = "600"
    result, _ = run(
        scholarly_searches(
            "semantic-scholar,openalex", base_urls={"semantic-scholar": server.url, "openalex": server.url}
        )
    )
    assert any("external search failed: semantic-scholar: rate limited (HTTP 429)" in n for n in result.notes)
    assert [s.source_label.split("]")[0] for s in result.sources] == ["[external: openalex"]


def test_every_service_failing_ends_in_not_found_with_the_reasons(server):
    server.mode.update(arxiv="500", openalex="malformed")
    result, _ = run(
        scholarly_searches("arxiv,openalex", base_urls={"arxiv": server.url, "openalex": server.url})
    )
    assert result.not_found
    assert len([n for n in result.notes if n.startswith("external search failed: ")]) == 2


def test_nothing_is_sent_unless_enabled(server):
    result, _ = run(None)
    assert result.not_found and server.requests == []
