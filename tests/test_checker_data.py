"""The checker's training data (labels by construction) and the training loop on a few pairs."""

import random

from reader.audit.verify import EvidenceRef
from scripts.training.claims import claims_for, near_copy, pairs_for, usable_sentence
from scripts.training.train import TrainConfig, auc, balanced_accuracy, train

SOURCE = "Our parser reaches an F1 of 91.2 on the test set, while the strongest baseline BiLSTM reaches 87.5."
NEXT = "Training the parser takes four hours on one GPU with the default settings."


def paper():
    return {
        "sentences": [(SOURCE, 1), (NEXT, 1)],
        "numbers": ["87.5", "91.2", "88.4", "2019"],
        "names": ["BiLSTM", "CRF", "GloVe"],
        "terms": ["the test set", "the parser"],
        "foreign_names": ["ResNet"],
    }


def test_usable_sentences_are_prose():
    assert usable_sentence(SOURCE)
    assert not usable_sentence("Table 3 12.1 13.4 15.6 17.2 18.9 20.1 22.3 23.9.")
    assert not usable_sentence("Too short.")
    assert not usable_sentence("这是一个足够长的中文句子，但是检查器只读英文，所以它不能作为训练句子使用。")


def test_claims_cover_the_kinds_with_their_labels():
    claims = claims_for(
        paper(),
        ["The sky is blue in every season of the year, as many people report."],
        random.Random(1),
        per_paper=2,
    )
    kinds = {c["kind"]: c["label"] for c in claims}
    assert kinds["verbatim"] == 1 and kinds["invented_claim"] == 0
    assert {k for k, label in kinds.items() if label == 0} - {"invented_claim"}  # rule-made fabrications
    assert all(c["claim"] != SOURCE for c in claims if c["label"] == 0)
    swapped = [c for c in claims if c["kind"] == "swapped_number"]
    assert all(any(n in c["claim"] for n in ("88.4",)) or "87.5" in c["claim"] for c in swapped)


def test_pairs_label_the_gold_excerpt_and_the_distracting_neighbour():
    gold = EvidenceRef(1, 3, 3, f"We built a parser. {SOURCE} {NEXT}")
    neighbour = EvidenceRef(
        2, 5, 5, "The corpus was collected from public sources in 2019 by two annotators."
    )
    supported = {
        "claim": SOURCE.replace("Our", "Their"),
        "label": 1,
        "kind": "verbatim",
        "sources": [(SOURCE, 1)],
    }
    pairs = pairs_for(supported, [gold, neighbour], [])
    assert [(p["label"], p["gold"]) for p in pairs] == [(1, True), (0, False)]
    fabricated = dict(supported, claim=SOURCE.replace("91.2", "87.5"), label=0, kind="swapped_number")
    assert [p["label"] for p in pairs_for(fabricated, [gold, neighbour], [])] == [0, 0]
    # a supported claim whose source was not retrieved gets its own passage's excerpt
    assert [(p["label"], p["evidence"]) for p in pairs_for(supported, [neighbour], [gold])] == [
        (0, neighbour.text),
        (1, gold.text),
    ]
    # an excerpt that may state the same fact gets no label
    restated = EvidenceRef(
        3, 1, 1, "The parser reaches an F1 of 91.2 on the test set; the baseline BiLSTM 87.5."
    )
    assert near_copy(SOURCE, restated.text)
    assert pairs_for(supported, [restated], []) == []


def test_auc_and_balanced_accuracy():
    assert auc([1, 1, 0, 0], [0.9, 0.8, 0.2, 0.1]) == 1.0
    assert auc([1, 0], [0.5, 0.5]) == 0.5
    assert balanced_accuracy([1, 1, 0, 0], [0.9, 0.4, 0.2, 0.6]) == 0.5


def test_training_runs_saves_fp16_weights_and_loads(tmp_path):
    from reader.checker.model import ClaimChecker
    from reader.index.dense import packaged_model_path

    pairs = [
        {"claim": SOURCE, "evidence": SOURCE, "label": 1},
        {"claim": SOURCE.replace("91.2", "87.5"), "evidence": SOURCE, "label": 0},
    ] * 4
    config = TrainConfig(max_pairs=16, batch_size=4, eval_every=2, max_tokens=64, patience=10)
    result = train(pairs, pairs[:4], packaged_model_path(), tmp_path, config, log=lambda line: None)
    assert result.steps == 4 and result.best_step in (2, 4) and "auc" in result.best_val
    from safetensors import safe_open

    with safe_open(str(tmp_path / "model.safetensors"), "pt") as fh:
        assert all(str(fh.get_tensor(k).dtype) == "torch.float16" for k in fh.keys())
    scored = ClaimChecker(tmp_path).score([SOURCE], [[SOURCE, NEXT]])
    assert 0.0 <= scored[0].p_supported <= 1.0 and scored[0].best in (0, 1)
