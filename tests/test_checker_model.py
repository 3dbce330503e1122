"""The shipped claim checker: its weights load offline and tell a swapped number from the paper's."""

import os

import pytest

from reader.checker.model import WEIGHTS, CheckerMissing, ClaimChecker

EVIDENCE = (
    "We evaluate on the held-out test set of 2,000 abstracts. Our parser reaches an F1 of 91.2 on "
    "the test set, while the strongest baseline reaches 87.5. Training takes four hours on one GPU."
)


@pytest.fixture(scope="module")
def checker():
    os.environ["HF_HUB_OFFLINE"] = "1"  # nothing may be fetched
    c = ClaimChecker(WEIGHTS, threads=2)
    c.load()
    return c


def test_the_shipped_weights_are_small_and_described():
    files = {p.name: p.stat().st_size for p in WEIGHTS.iterdir()}
    assert {"model.safetensors", "config.json", "train_card.json"} <= set(files)
    assert sum(files.values()) < 50_000_000


@pytest.mark.xfail(
    strict=True,
    reason="the shipped checker scores by wording, not facts: the swapped claim "
    "0.91, the faithful one 0.92 (docs/design/audit.md, 'The claim checker')",
)
def test_a_swapped_number_scores_below_the_faithful_claim(checker):
    faithful, swapped, reversed_ = checker.score(
        [
            "Our parser reaches an F1 of 91.2 on the test set, while the strongest baseline reaches 87.5.",
            "Our parser reaches an F1 of 87.5 on the test set, while the strongest baseline reaches 91.2.",
            "The strongest baseline reaches a higher F1 on the test set than the parser.",
        ],
        [[EVIDENCE]] * 3,
    )
    assert faithful.p_supported > 0.5 > swapped.p_supported
    assert reversed_.p_supported < faithful.p_supported
    assert faithful.best == 0


def test_the_shipped_weights_score_offline(checker):
    (faithful,) = checker.score(["Our parser reaches an F1 of 91.2 on the test set."], [[EVIDENCE]])
    (reversed_,) = checker.score(
        ["The strongest baseline reaches a higher F1 on the test set than the parser."], [[EVIDENCE]]
    )
    assert faithful.p_supported > 0.5 > reversed_.p_supported


def test_the_best_excerpt_is_kept(checker):
    (scored,) = checker.score(
        ["The parser reaches an F1 of 91.2 on the test set."],
        [["The corpus was collected in 2019 from public sources.", EVIDENCE]],
    )
    assert scored.best == 1


def test_missing_weights_say_what_to_do(tmp_path):
    with pytest.raises(
        CheckerMissing, match="no model.safetensors; reinstall reader or run scripts/train_checker.py"
    ):
        ClaimChecker(tmp_path).load()
