"""multi_search: each path's known answers, the fusion, restriction to one paper."""

import pytest

from reader.index.dense import HashingEmbedder
from reader.index.search import RANK_DEPTH, RRF_K, multi_search, rrf_fuse
from reader.index.store import SearchIndex
from reader.store.db import transaction
from reader.store.tables import Chunk, Paper

PAPER_A = "a" * 64
PAPER_B = "b" * 64
PAPER_ZH = "c" * 64

CORPUS = {
    PAPER_A: [
        "The car engine was tested in cold weather on a dynamometer.",
        "Transformers use self-attention over all tokens of the input sequence.",
        "We report BLEU scores for German to English translation.",
        "Limitations: the dataset covers only newswire text.",
    ],
    PAPER_B: [
        "Wheat seedlings under drought stress change their metabolite profiles.",
        "Metabolomics was performed with gas chromatography mass spectrometry.",
        "Limitations: the dataset covers only newswire text.",
    ],
    PAPER_ZH: [
        "本文提出一种基于注意力机制的中文文本分类方法。",
        "实验在三个公开数据集上进行，准确率提高了百分之五。",
        "我们使用BERT模型作为编码器，并在下游任务上微调。",
    ],
}


def add_papers(db, corpus) -> dict[tuple[str, int], int]:
    """Paper + Chunk rows; returns (paper_id, ordinal) -> chunk id."""
    ids = {}
    with transaction(db) as session:
        for paper_id, texts in corpus.items():
            session.add(
                Paper(
                    id=paper_id,
                    title=paper_id[:4],
                    source_path=f"{paper_id[:4]}.pdf",
                    source_kind="pdf",
                    pages=len(texts),
                )
            )
            session.flush()
            for ordinal, text in enumerate(texts):
                chunk = Chunk(
                    paper_id=paper_id,
                    ordinal=ordinal,
                    section=f"S{ordinal}",
                    page_start=ordinal + 1,
                    page_end=ordinal + 2,
                    text=text,
                )
                session.add(chunk)
                session.flush()
                ids[(paper_id, ordinal)] = chunk.id
    return ids


@pytest.fixture
def library(db, tmp_path):
    ids = add_papers(db, CORPUS)
    index = SearchIndex(
        tmp_path / "index",
        db,
        HashingEmbedder(dim=2048, synonyms=[{"car", "automobile"}, {"accuracy", "准确率"}]),
    )
    for paper_id, texts in CORPUS.items():
        index.add_paper(paper_id, [(ids[(paper_id, i)], t) for i, t in enumerate(texts)])
    return index, ids


def test_bm25_path_finds_the_passage_sharing_rare_words(library):
    index, ids = library
    top = index.bm25_top("gas chromatography", 3)
    assert top[0][0] == ids[(PAPER_B, 1)]
    assert len(top) == 1  # no other chunk shares a token: zero scores are not hits


def test_bm25_matches_inflected_forms_through_stemming(library):
    index, ids = library
    assert index.bm25_top("translating scores reported", 1)[0][0] == ids[(PAPER_A, 2)]


def test_dense_path_finds_a_synonym_bm25_cannot(library):
    index, ids = library
    assert index.bm25_top("automobile", 3) == []
    assert index.dense_top("automobile", 1)[0][0] == ids[(PAPER_A, 0)]


def test_passage_found_by_only_one_path_still_comes_back(library):
    index, ids = library
    hits = index.search("automobile", top_k_per_path=3)
    car = [h for h in hits if h.chunk_id == ids[(PAPER_A, 0)]]
    assert car and car[0].bm25_rank is None and car[0].dense_rank == 1
    assert hits[0].chunk_id == ids[(PAPER_A, 0)]


def test_hit_found_by_both_paths_appears_once_with_both_ranks(library):
    index, ids = library
    hits = index.search("self-attention over tokens")
    assert [h.chunk_id for h in hits].count(ids[(PAPER_A, 1)]) == 1
    top = hits[0]
    assert top.chunk_id == ids[(PAPER_A, 1)]
    assert (top.bm25_rank, top.dense_rank) == (1, 1)
    assert top.score == pytest.approx(2 / (RRF_K + 1))
    assert (top.paper_id, top.section, top.pages) == (PAPER_A, "S1", "2-3")
    assert top.text == CORPUS[PAPER_A][1]


def test_identical_passages_in_two_papers_collapse(library):
    index, _ = library
    hits = index.search("limitations newswire dataset", top_k_per_path=5)
    texts = [h.text for h in hits]
    assert texts.count("Limitations: the dataset covers only newswire text.") == 1


def test_chinese_query_finds_chinese_passage(library):
    index, ids = library
    hits = index.search("中文文本分类")
    assert hits[0].chunk_id == ids[(PAPER_ZH, 0)]
    assert hits[0].bm25_rank == 1


def test_mixed_chinese_english_query(library):
    index, ids = library
    assert index.bm25_top("BERT 编码器 fine-tuning", 1)[0][0] == ids[(PAPER_ZH, 2)]
    # a Chinese word against a passage whose English synonym the dense path knows
    hits = index.search("实验 accuracy")
    assert ids[(PAPER_ZH, 1)] in [h.chunk_id for h in hits[:1]]


def test_restricting_to_a_paper_searches_within_it(library):
    index, ids = library
    # the best matches overall are in paper A; within B there are still answers
    hits = index.search("self-attention over tokens", paper_id=PAPER_B, top_k_per_path=2)
    assert hits and {h.paper_id for h in hits} == {PAPER_B}
    hits = index.search("gas chromatography", paper_id=PAPER_A)
    assert hits and all(h.paper_id == PAPER_A for h in hits)


def test_unknown_paper_or_empty_query_gives_no_hits(library):
    index, _ = library
    assert index.search("wheat", paper_id="f" * 64) == []
    assert index.search("   ") == []


# ---- fusion as a pure function ----------------------------------------------


def test_rrf_fuse_orders_by_reciprocal_rank_sum():
    fused = rrf_fuse([(10, 5.0), (11, 3.0), (12, 1.0)], [(12, 0.9), (13, 0.8), (10, 0.7)])
    by_id = {f.chunk_id: f for f in fused}
    assert by_id[10].score == pytest.approx(1 / 61 + 1 / 63)
    assert by_id[12].score == pytest.approx(1 / 63 + 1 / 61)
    assert by_id[11].score == pytest.approx(1 / 62) and by_id[11].dense_rank is None
    assert by_id[13].score == pytest.approx(1 / 62) and by_id[13].bm25_rank is None
    assert [f.chunk_id for f in fused] == [10, 12, 11, 13]  # ties: better single rank, bm25 first
    assert (by_id[12].bm25_rank, by_id[12].bm25_score, by_id[12].dense_rank) == (3, 1.0, 1)


def test_rrf_fuse_union_is_deduplicated():
    fused = rrf_fuse([(1, 2.0), (2, 1.0)], [(2, 0.5), (1, 0.4)])
    assert sorted(f.chunk_id for f in fused) == [1, 2]


class StubPaths:
    def __init__(self, bm25, dense, details):
        self.bm25, self.dense, self.details = bm25, dense, details
        self.asked = []

    def bm25_top(self, query, k, paper_id=None):
        self.asked.append(("bm25", k, paper_id))
        return self.bm25[:k]

    def dense_top(self, query, k, paper_id=None, query_vector=None):
        self.asked.append(("dense", k, paper_id))
        return self.dense[:k]

    def chunk_details(self, chunk_ids):
        return {c: self.details[c] for c in chunk_ids if c in self.details}


def _detail(paper, text):
    return {"paper_id": paper, "text": text, "section": "", "page_start": 1, "page_end": 1}


def test_multi_search_passes_k_and_paper_to_both_paths_and_skips_deleted_chunks():
    stub = StubPaths(
        [(1, 3.0), (2, 2.0), (3, 1.0), (4, 0.5)],
        [(5, 0.9), (1, 0.8)],
        {1: _detail("p", "one"), 2: _detail("p", "two"), 5: _detail("p", "five")},
    )
    hits = multi_search(stub, "q", paper_id="p", top_k_per_path=3)
    assert stub.asked == [("bm25", RANK_DEPTH, "p"), ("dense", RANK_DEPTH, "p")]
    assert [h.chunk_id for h in hits] == [1, 5, 2]  # chunk 3 is gone from the database


def test_multi_search_returns_the_union_of_top_k_scored_with_deeper_ranks():
    bm25 = [(1, 9.0), (2, 8.0), (3, 7.0), (4, 6.0)]
    dense = [(5, 0.9), (6, 0.8), (4, 0.7), (2, 0.6)]
    details = {c: _detail("p", f"text {c}") for c in range(1, 7)}
    hits = multi_search(StubPaths(bm25, dense, details), "q", top_k_per_path=2)
    assert {h.chunk_id for h in hits} == {1, 2, 5, 6}  # 4 is third on both paths: not in the union
    assert hits[0].chunk_id == 2  # bm25 #2 and dense #4 beats bm25 #1 alone
    assert (hits[0].bm25_rank, hits[0].dense_rank) == (2, 4)
    assert hits[0].score == pytest.approx(1 / 62 + 1 / 64)


def test_multi_search_collapses_same_text_keeping_the_better_hit():
    stub = StubPaths(
        [(1, 3.0), (2, 2.0)], [(2, 0.9)], {1: _detail("p", "Same  text."), 2: _detail("q", "same text.")}
    )
    hits = multi_search(stub, "q")
    assert [h.chunk_id for h in hits] == [2]


def test_large_matrix_half_precision_scan_gives_the_exact_top_k():
    import numpy as np

    from reader.index.dense import HALF_PRECISION_FROM, DenseMatrix, cosine_top

    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((HALF_PRECISION_FROM + 100, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = vectors[123] + 0.05 * vectors[456]
    fast = DenseMatrix(vectors).top(query, 5)
    exact = cosine_top(vectors, query, 5)
    assert [r for r, _ in fast] == [r for r, _ in exact] and fast[0][0] == 123
    assert [s for _, s in fast] == pytest.approx([s for _, s in exact], abs=1e-6)
    rows = np.arange(100, 200)
    assert DenseMatrix(vectors).top(query, 2, rows)[0][0] == 123
    # a large restriction goes through the float16 scan too, and stays within the rows
    even = np.arange(0, len(vectors), 2)
    restricted = DenseMatrix(vectors).top(query, 5, even)
    assert [r for r, _ in restricted] == [r for r, _ in cosine_top(vectors, query, 5, even)]
    assert all(r % 2 == 0 for r, _ in restricted)


def test_split_sentences_keeps_abbreviations_decimals_and_short_fragments_together():
    from reader.index.search import split_sentences

    assert split_sentences("ADAR1 binds to Dicer. AIRE is expressed in some skin tumors.") == [
        "ADAR1 binds to Dicer.",
        "AIRE is expressed in some skin tumors.",
    ]
    assert split_sentences("A dose of 0.5 mg, e.g. the usual one, works.") == [
        "A dose of 0.5 mg, e.g. the usual one, works."
    ]
    assert split_sentences("Fig. 3 shows the effect on accuracy.") == ["Fig. 3 shows the effect on accuracy."]
    assert split_sentences("本文提出一种新的中文文本分类方法。实验在三个公开数据集上进行。") == [
        "本文提出一种新的中文文本分类方法。",
        "实验在三个公开数据集上进行。",
    ]


class PerSentencePaths(StubPaths):
    """Each sentence has its own ranked lists; records the queries and vectors it was given."""

    def __init__(self, by_query, details):
        super().__init__([], [], details)
        self.by_query = by_query
        self.vectors = []

    def bm25_top(self, query, k, paper_id=None):
        self.asked.append(("bm25", query, paper_id))
        return self.by_query[query][0][:k]

    def dense_top(self, query, k, paper_id=None, query_vector=None):
        self.asked.append(("dense", query, paper_id))
        self.vectors.append(query_vector)
        return self.by_query[query][1][:k]

    def embed_queries(self, queries):
        return [f"vec:{q}" for q in queries]


def test_multi_sentence_query_gives_each_sentence_its_own_best_evidence():
    first, second = "Drought stress changes wheat metabolites.", "Transformers use self-attention."
    by_query = {
        # the first sentence's lists agree on chunk 1 and are crowded with its paper's chunks 2, 3
        first: ([(1, 9.0), (2, 8.0), (3, 7.0)], [(1, 0.9), (2, 0.8), (3, 0.7)]),
        second: ([(7, 5.0), (8, 4.0)], [(9, 0.6), (7, 0.5)]),
        f"{first} {second}": ([(1, 9.0), (2, 8.0), (3, 7.0), (7, 1.0)], [(1, 0.9), (2, 0.8), (3, 0.7)]),
    }
    details = {c: _detail("p", f"text {c}") for c in range(1, 10)}
    stub = PerSentencePaths(by_query, details)
    hits = multi_search(stub, f"{first} {second}", paper_id="p", top_k_per_path=3)
    assert [q for _, q, _ in stub.asked] == [first, first, second, second]
    assert {p for _, _, p in stub.asked} == {"p"}
    assert stub.vectors == [f"vec:{first}", f"vec:{second}"]
    # each sentence's first hit before either sentence's second; the one both paths agree on first
    assert [h.chunk_id for h in hits[:2]] == [1, 7]
    assert hits[1].bm25_rank == 1 and hits[1].dense_rank == 2
    assert hits[0].score == pytest.approx(1 / (RRF_K + 1))
    assert len(hits) <= 6
    # as one query, the first sentence's paper fills the top 3
    whole = multi_search(stub, f"{first} {second}", paper_id="p", top_k_per_path=3, split=False)
    assert [h.chunk_id for h in whole[:3]] == [1, 2, 3]


def test_multi_sentence_query_on_a_real_index_finds_both_topics(library):
    index, ids = library
    hits = index.search(
        "Wheat seedlings under drought stress. Transformers use self-attention over tokens.", top_k_per_path=1
    )
    found = [h.chunk_id for h in hits[:2]]
    assert ids[(PAPER_B, 0)] in found and ids[(PAPER_A, 1)] in found
