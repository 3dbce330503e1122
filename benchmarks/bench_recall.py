"""Evidence recall of BM25, dense and fused search on SciFact, and the dense path on Chinese.

1. The gold abstracts of ../shared/eval/scifact_claims.jsonl (one paper each,
   chunked by the ingest chunker) are indexed; each claim is a query. Prints
   recall@1 and recall@3 of the claim's own abstract for BM25 alone, dense alone
   and fused (the abstract counts as found when any of its chunks is).
2. The audit's query shape: 4 consecutive claims joined into one query; for
   each of the 4, is its abstract in the fused top 3 (searched sentence by
   sentence, as SearchIndex.search does, and as one query), and in each
   path's top 3 for the joined text?
3. A small hand-written Chinese set (12 passages, 12 paraphrased questions)
   and its English translation, to show how the English-only MiniLM does on
   Chinese against BM25's character bigrams.

    .venv/bin/python -m benchmarks.bench_recall [--embed-model PATH]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks.common import SHARED_EVAL
from reader.index.dense import FlagEmbedder, embedder_name, packaged_model_path
from reader.index.store import SearchIndex
from reader.ingest.chunk import chunk_paper
from reader.ingest.model import Block, ParsedPaper
from reader.store.db import open_database, transaction
from reader.store.tables import Chunk, Paper

SCIFACT = SHARED_EVAL / "scifact_claims.jsonl"

# (passage, paraphrased question) in Chinese, then the same pairs in English.
ZH_PAIRS = [
    ("植物通过光合作用把二氧化碳和水转化为葡萄糖，并释放氧气。", "绿色植物怎样利用阳光制造养分？"),
    ("接种疫苗可以刺激免疫系统产生抗体，从而预防传染病。", "打预防针为什么能防止生病？"),
    ("地震由地壳板块运动引起，震级通常用里氏标度衡量。", "板块移动造成的大地震动如何测量强度？"),
    (
        "神经机器翻译模型使用编码器和解码器，把源语言句子转换为目标语言。",
        "用神经网络把一种语言自动翻成另一种语言",
    ),
    ("温室气体排放导致全球平均气温上升，海平面随之升高。", "气候变暖对海洋水位有什么影响？"),
    ("充足的睡眠有助于巩固记忆，睡眠不足会降低注意力。", "晚上睡不够对学习和专注有什么坏处？"),
    ("咖啡因是一种中枢神经兴奋剂，常见于咖啡和茶中。", "喝咖啡为什么让人精神？"),
    ("区块链是一种去中心化的分布式账本，每个区块都包含前一个区块的哈希值。", "比特币背后的去中心化记账技术"),
    ("干旱胁迫下，小麦叶片中的脯氨酸和可溶性糖含量显著增加。", "缺水时麦子的代谢物如何变化？"),
    ("我们利用论文之间的引用关系图来训练文档表示，用于推荐相关文献。", "基于引用网络的学术论文推荐方法"),
    ("滥用抗生素会导致细菌产生耐药性，使感染更难治疗。", "过度使用抗菌药物带来的耐药问题"),
    ("马拉松全程为42.195公里，运动员需要长期的耐力训练。", "长跑比赛的距离是多少公里？"),
]
EN_PAIRS = [
    (
        "Plants use photosynthesis to turn carbon dioxide and water into glucose, releasing oxygen.",
        "How do green plants make food from sunlight?",
    ),
    (
        "Vaccination stimulates the immune system to produce antibodies and so prevents infectious disease.",
        "Why does getting a shot keep you from falling ill?",
    ),
    (
        "Earthquakes are caused by tectonic plate motion; magnitude is usually measured on the Richter scale.",
        "How is the strength of ground shaking from moving plates measured?",
    ),
    (
        "Neural machine translation models use an encoder and a decoder to turn a source sentence into the target language.",
        "Automatically rendering one language into another with neural networks",
    ),
    (
        "Greenhouse gas emissions raise the global mean temperature, and sea levels rise with it.",
        "What does climate warming do to ocean water levels?",
    ),
    (
        "Enough sleep helps consolidate memory; lack of sleep lowers attention.",
        "What harm does too little sleep at night do to learning and focus?",
    ),
    (
        "Caffeine is a central nervous system stimulant commonly found in coffee and tea.",
        "Why does drinking coffee make people alert?",
    ),
    (
        "A blockchain is a decentralised distributed ledger in which every block holds the hash of the previous one.",
        "The decentralised bookkeeping technology behind bitcoin",
    ),
    (
        "Under drought stress, proline and soluble sugar content rise markedly in wheat leaves.",
        "How do the metabolites of wheat change when water is short?",
    ),
    (
        "We train document representations on the citation graph between papers to recommend related literature.",
        "Recommending scholarly papers from the citation network",
    ),
    (
        "Overuse of antibiotics makes bacteria resistant, so infections become harder to treat.",
        "Resistance problems caused by excessive use of antibacterial drugs",
    ),
    (
        "A full marathon is 42.195 kilometres, and runners need long endurance training.",
        "How many kilometres is the long-distance race?",
    ),
]


def load_claims() -> list[dict]:
    return [json.loads(line) for line in SCIFACT.read_text().splitlines() if line.strip()]


def build_library(db, documents: dict[str, tuple[str, str]]) -> None:
    """documents: paper_id -> (title, text); chunked as ingest chunks a one-section paper."""
    with transaction(db) as session:
        for paper_id, (title, text) in documents.items():
            parsed = ParsedPaper(
                sha256=paper_id,
                source_path=f"{paper_id}.txt",
                source_kind="txt",
                title=title,
                authors=[],
                year=None,
                abstract="",
                pages=1,
                language="en",
                blocks=[Block(title, 1, "", "title"), Block(text, 1, "Abstract", "body")],
            )
            session.add(
                Paper(id=paper_id, title=title, source_path=parsed.source_path, source_kind="txt", pages=1)
            )
            session.flush()
            session.add_all(
                [
                    Chunk(
                        paper_id=paper_id,
                        ordinal=c.ordinal,
                        section=c.section,
                        page_start=c.page_start,
                        page_end=c.page_end,
                        text=c.text,
                        n_tokens=c.n_tokens,
                    )
                    for c in chunk_paper(parsed)
                ]
            )


def papers_of(index, ranked: list[tuple[int, float]]) -> list[str]:
    details = index.chunk_details([cid for cid, _ in ranked])
    return [details[cid]["paper_id"] for cid, _ in ranked]


def rank_lists(index, query: str, k: int = 3, whole: bool = False) -> dict[str, list[str]]:
    """Paper ids of the top-k chunks per path, and of the fused hits (whole: also the fused
    hits of the text searched as one query, without the sentence split)."""
    vector = index.embed_query(query)
    lists = {
        "bm25": papers_of(index, index.bm25_top(query, k)),
        "dense": papers_of(index, index.dense_top(query, k, query_vector=vector)),
        "fused": [h.paper_id for h in index.search(query, top_k_per_path=k, query_vector=vector)],
    }
    if whole:
        lists["fused, one query (no split)"] = [
            h.paper_id for h in index.search(query, top_k_per_path=k, query_vector=vector, split=False)
        ]
    return lists


def distinct(papers: list[str]) -> list[str]:
    """Papers in order of their first (best) chunk."""
    return list(dict.fromkeys(papers))


def abstract_lists(index, query: str, depth: int = 20) -> dict[str, list[str]]:
    """Abstracts (not chunks) in rank order, each ranked by its best chunk: per path
    from its top `depth` chunks, fused from the hits the search returns."""
    vector = index.embed_query(query)
    return {
        "bm25": distinct(papers_of(index, index.bm25_top(query, depth))),
        "dense": distinct(papers_of(index, index.dense_top(query, depth, query_vector=vector))),
        "fused": distinct([h.paper_id for h in index.search(query, top_k_per_path=3, query_vector=vector)]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embed-model", help="model directory (default: the packaged MiniLM)")
    args = parser.parse_args()
    model = args.embed_model or str(packaged_model_path())
    t0 = time.perf_counter()
    embedder = FlagEmbedder(model, name=embedder_name(args.embed_model))
    print(
        f"embedding model: {embedder.name} ({embedder.dim} dims), loaded in {time.perf_counter() - t0:.1f} s"
    )

    claims = load_claims()
    documents: dict[str, tuple[str, str]] = {}
    claim_paper: list[str] = []
    for claim in claims:
        gold = claim["gold_ctx"][0]
        paper_id = next((p for p, doc in documents.items() if doc == (gold["title"], gold["text"])), None)
        if paper_id is None:
            paper_id = f"scifact-{len(documents):04d}"
            documents[paper_id] = (gold["title"], gold["text"])
        claim_paper.append(paper_id)

    with tempfile.TemporaryDirectory() as tmp:
        db = open_database(f"sqlite:///{tmp}/bench.db")
        build_library(db, documents)
        index = SearchIndex(Path(tmp) / "index", db, embedder)
        t0 = time.perf_counter()
        n_chunks = index.rebuild()
        build_s = time.perf_counter() - t0
        print(
            f"SciFact: {len(claims)} claims, {len(documents)} distinct gold abstracts, "
            f"{n_chunks} chunks indexed in {build_s:.1f} s"
        )

        # 1. one claim per query
        found = {path: [0, 0] for path in ("bm25", "dense", "fused")}
        by_abstract = {path: 0 for path in ("bm25", "dense", "fused")}
        in_union = 0
        repeats = Counter(c["input"] for c in claims)
        missed = missed_repeated = 0
        gold_sets: dict[str, set[str]] = {}
        top3_of_claim: dict[str, dict[str, list[str]]] = {}
        for claim, paper_id in zip(claims, claim_paper):
            gold_sets.setdefault(claim["input"], set()).add(paper_id)
        for claim, paper_id in zip(claims, claim_paper):
            lists = rank_lists(index, claim["input"])
            top3_of_claim[claim["input"]] = {path: papers[:3] for path, papers in lists.items()}
            for path, papers in lists.items():
                found[path][0] += papers[:1] == [paper_id]
                found[path][1] += paper_id in papers[:3]
                in_union += path == "fused" and paper_id in papers
                if path == "fused" and paper_id not in papers[:3]:
                    missed += 1
                    missed_repeated += repeats[claim["input"]] > 1
            for path, papers in abstract_lists(index, claim["input"]).items():
                by_abstract[path] += paper_id in papers[:3]
        print("\nsingle claims as queries (recall of the claim's own abstract)")
        print(f"  {'path':6} {'recall@1':>9} {'recall@3':>9}")
        for path, (at1, at3) in found.items():
            print(f"  {path:6} {at1 / len(claims):9.3f} {at3 / len(claims):9.3f}")
        print(f"  in any fused hit (union of both top 3s, up to 6 passages): {in_union / len(claims):.3f}")
        print(
            "  counting the top 3 distinct abstracts instead of the top 3 chunks (an abstract ranked by its "
            "best chunk): " + ", ".join(f"{p} {n / len(claims):.3f}" for p, n in by_abstract.items())
        )
        repeated = sum(n for n in repeats.values() if n > 1)
        print(
            f"  {repeated} of the {len(claims)} rows repeat a claim that has several gold abstracts "
            f"(each row asks for one of them); {missed_repeated} of the {missed} fused misses are such rows"
        )
        capped = {
            path: sum(
                len(gold & set(top3_of_claim[claim][path])) / min(3, len(gold))
                for claim, gold in gold_sets.items()
            )
            / len(gold_sets)
            for path in ("bm25", "dense", "fused")
        }
        print(
            f"  per distinct claim ({len(gold_sets)}), its gold abstracts as one set, recall@3 capped at 3 "
            "(MTEB's recall_cap): " + ", ".join(f"{p} {v:.3f}" for p, v in capped.items())
        )

        # 2. the audit's query shape: 4 claims joined
        batch_found: dict[str, int] = {}
        n_batched = 0
        for start in range(0, len(claims) - 3, 4):
            group = list(range(start, start + 4))
            query = " ".join(claims[i]["input"] for i in group)
            lists = rank_lists(index, query, whole=True)
            for i in group:
                n_batched += 1
                for path, papers in lists.items():
                    batch_found[path] = batch_found.get(path, 0) + (claim_paper[i] in papers[:3])
        print(
            f"\n4 claims joined into one query ({n_batched // 4} queries, {n_batched} claims): "
            "share of claims whose abstract is in the top 3"
        )
        for path, count in batch_found.items():
            print(f"  {path:30} {count / n_batched:6.3f}")

    # 3. Chinese against English, same content
    print("\nhand-written pairs, 12 passages each: recall@1 / recall@3 of the paraphrased question")
    for label, pairs in (("Chinese", ZH_PAIRS), ("English", EN_PAIRS)):
        with tempfile.TemporaryDirectory() as tmp:
            db = open_database(f"sqlite:///{tmp}/pairs.db")
            build_library(db, {f"pair-{i:02d}": (f"p{i}", text) for i, (text, _) in enumerate(pairs)})
            index = SearchIndex(Path(tmp) / "index", db, embedder)
            index.rebuild()
            found = {path: [0, 0] for path in ("bm25", "dense", "fused")}
            for i, (_, question) in enumerate(pairs):
                for path, papers in rank_lists(index, question).items():
                    found[path][0] += papers[:1] == [f"pair-{i:02d}"]
                    found[path][1] += f"pair-{i:02d}" in papers[:3]
            cells = "  ".join(f"{p} {a / len(pairs):.2f}/{b / len(pairs):.2f}" for p, (a, b) in found.items())
            print(f"  {label:8} {cells}")


if __name__ == "__main__":
    main()
