"""Choose a CRAG setting on one part of the question set and report it on the other.

Reads the rows `reader calibrate --rows FILE` saved (one per question and setting) and splits
the questions in two: the development part (the 27 questions of the first question set,
`DEV_IDS`), on which the setting is chosen the way `reader calibrate` recommends (best accuracy,
then fewest calls), and the held-out part (the 61 added later), on which the chosen setting and
the default are reported with Wilson 95% intervals. Only questions every setting answered count,
so a run cut short compares like with like. Settings run without withholding unsupported
answers also get their "withheld" twin, scored from the same rows (`withheld`).

    .venv/bin/reader calibrate --questions eval/questions.jsonl --quote off,0.9,0.8,0.7,0.6 \
        --rows /tmp/calibration.jsonl --json > /tmp/calibration.json
    .venv/bin/python -m benchmarks.calibration_split /tmp/calibration.jsonl

It also prints the separation of the grader's best P(YES) per question (answerable against
unanswerable, AUC with a bootstrap 95% interval) on each part. With `--against EARLIER_ROWS` it
only compares two runs: every setting both hold, per part, e.g. before and after a prompt change.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import statistics
from collections import defaultdict
from pathlib import Path

from benchmarks.common import DEV_QUESTION_IDS as DEV_IDS
from benchmarks.common import wilson
from reader.crag.calibrate import Setting, percentile, recommend, summarise

DEFAULT = Setting()  # CragConfig's defaults


def setting_of(row: dict) -> Setting:
    """The row's setting; a field the row does not name has Setting's default, except the two
    fields older rows lack: those were written when the writer refused and answers were kept."""
    fields = {f.name for f in dataclasses.fields(Setting)}
    return Setting(
        **{
            "refusal": "writer",
            "ungrounded": "keep",
            **{k: v for k, v in row["setting"].items() if k in fields},
        }
    )


def withheld(row: dict) -> dict:
    """The row as `ungrounded="refuse"` would have scored it: an answer the check found
    unsupported becomes "not found" (the calls are the same; a check that timed out or failed
    would not withhold, which the rows cannot tell apart: such checks are rare)."""
    if row["not_found"] or row["grounded"]:
        return row
    return {**row, "not_found": True, "right": not row["answerable"], "quoted": False, "grounded": True}


def auc(positives: list[float], negatives: list[float]) -> float | None:
    if not positives or not negatives:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def auc_interval(positives, negatives, rounds: int = 2000, seed: int = 7) -> tuple[float, float] | None:
    if not positives or not negatives:
        return None
    rng = random.Random(seed)
    values = sorted(
        auc(rng.choices(positives, k=len(positives)), rng.choices(negatives, k=len(negatives)))
        for _ in range(rounds)
    )
    return values[int(0.025 * rounds)], values[int(0.975 * rounds) - 1]


def share(rows: list[dict], which) -> str:
    part = [r for r in rows if which(r)]
    k = sum(r["right"] for r in part)
    low, high = wilson(k, len(part))
    return f"{k}/{len(part)} ({k / len(part):.0%}, {low:.0%}–{high:.0%})" if part else "-"


def line(label: str, rows: list[dict]) -> str:
    calls = sum(r["llm_calls"] for r in rows) / len(rows)
    return (
        f"{label:<44} answers {share(rows, lambda r: r['answerable']):<22} "
        f"refusals {share(rows, lambda r: not r['answerable']):<22} "
        f"overall {share(rows, lambda r: True):<22} quoted {sum(bool(r.get('quoted')) for r in rows):>3}  "
        f"calls/q {calls:.2f}"
    )


def separation(rows: list[dict], title: str) -> str:
    by_id = {r["id"]: r for r in rows}.values()
    pos = [r["best_p_yes"] or 0.0 for r in by_id if r["answerable"]]
    neg = [r["best_p_yes"] or 0.0 for r in by_id if not r["answerable"]]
    value = auc(pos, neg)
    if value is None:
        return f"{title}: separation needs both answerable and unanswerable questions"
    low, high = auc_interval(pos, neg)
    return (
        f"{title}: best P(YES) answerable vs unanswerable AUC {value:.3f} (95% {low:.3f}–{high:.3f}), "
        f"{len(pos)} vs {len(neg)} questions"
    )


def first_runs(first_rows: dict[str, dict]) -> str:
    """Latency of each question's first setting, the one that made its calls (the settings after
    it share the response cache, so their seconds say nothing about the model's speed)."""
    rows = list(first_rows.values())
    seconds = [r["seconds"] for r in rows]
    calls = [r["llm_calls"] for r in rows]
    labels = sorted({setting_of(r).label for r in rows})
    return (
        f"uncached (each question's first setting: {'; '.join(labels)}): {len(rows)} questions, "
        f"p50 {percentile(seconds, 50):.1f} s, p95 {percentile(seconds, 95):.1f} s, "
        f"LLM calls median {statistics.median(calls):g} (mean {statistics.mean(calls):.2f})"
    )


def cell(rows: list[dict]) -> str:
    k = sum(r["right"] for r in rows)
    return f"{k}/{len(rows)}" if rows else "-"


def markdown_table(by_setting: dict, ids: set[str]) -> str:
    lines = [
        "| setting | answers right (dev / held out) | refusals right (dev / held out) | all: right "
        "[95%] | answers grounded | quoted | LLM calls / question |",
        "|---|---|---|---|---|---|---|",
    ]
    for setting, rows in by_setting.items():
        part = {
            name: [rows[i] for i in sorted(ids) if (i in DEV_IDS) == (name == "dev")]
            for name in ("dev", "held")
        }
        every = [rows[i] for i in sorted(ids)]
        k = sum(r["right"] for r in every)
        low, high = wilson(k, len(every))
        answered = [r for r in every if not r["not_found"]]
        lines.append(
            f"| {setting.label} "
            f"| {cell([r for r in part['dev'] if r['answerable']])} / {cell([r for r in part['held'] if r['answerable']])} "
            f"| {cell([r for r in part['dev'] if not r['answerable']])} / "
            f"{cell([r for r in part['held'] if not r['answerable']])} "
            f"| {k}/{len(every)} [{low:.0%}–{high:.0%}] "
            f"| {sum(r['grounded'] for r in answered)}/{len(answered)} "
            f"| {sum(bool(r.get('quoted')) for r in every)} "
            f"| {sum(r['llm_calls'] for r in every) / len(every):.2f} |"
        )
    return "\n".join(lines)


def read_rows(path: Path) -> tuple[dict[Setting, dict[str, dict]], dict[str, dict]]:
    """The rows by setting and question, and each question's first row."""
    by_setting: dict[Setting, dict[str, dict]] = defaultdict(dict)
    first_rows: dict[str, dict] = {}
    for text in path.read_text(encoding="utf-8").splitlines():
        if text.strip():
            row = json.loads(text)
            by_setting[setting_of(row)][row["id"]] = row
            first_rows.setdefault(row["id"], row)
    return by_setting, first_rows


def compare(earlier: Path, by_setting: dict[Setting, dict[str, dict]]) -> None:
    """Each setting both files hold, the earlier run's rows beside these, per part, on the
    questions both answered (e.g. the same questions after a change of the answer prompt)."""
    before, _ = read_rows(earlier)
    for setting in [s for s in by_setting if s in before]:
        ids = set(by_setting[setting]) & set(before[setting])
        print(f"{setting.label}: {len(ids)} questions in both runs")
        for title, part in (("development", ids & DEV_IDS), ("held out", ids - DEV_IDS), ("all", ids)):
            if part:
                print(f"  {title}:")
                print("    " + line(f"before ({earlier.name})", [before[setting][i] for i in sorted(part)]))
                print("    " + line("now", [by_setting[setting][i] for i in sorted(part)]))
        changed = sorted(i for i in ids if before[setting][i]["right"] != by_setting[setting][i]["right"])
        print(f"  right before and wrong now, or the other way round: {', '.join(changed) or 'none'}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", type=Path, help="the JSONL file of `reader calibrate --rows`")
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="also print a Markdown table of every setting on the development part, "
        "the held-out part and all questions",
    )
    parser.add_argument(
        "--against",
        type=Path,
        metavar="EARLIER_ROWS",
        help="only compare: each setting both files hold, the earlier rows beside these",
    )
    args = parser.parse_args()
    by_setting, first_rows = read_rows(args.rows)
    if args.against:
        compare(args.against, by_setting)
        return
    for setting in [s for s in by_setting if s.ungrounded == "keep"]:
        derived = dataclasses.replace(setting, ungrounded="refuse")
        if derived not in by_setting:  # the same calls, scored as if unsupported answers were withheld
            by_setting[derived] = {i: withheld(r) for i, r in by_setting[setting].items()}
    common = set.intersection(*(set(rows) for rows in by_setting.values()))
    print(
        f"{len(common)} questions answered by all {len(by_setting)} settings "
        f"({len(common & DEV_IDS)} development, {len(common - DEV_IDS)} held out)\n"
    )
    for title, ids in (("development", common & DEV_IDS), ("held out", common - DEV_IDS), ("all", common)):
        if not ids:
            continue
        print(f"{title}:")
        for setting, rows in by_setting.items():
            print("  " + line(setting.label, [rows[i] for i in sorted(ids)]))
        for routing in dict.fromkeys(setting.routing for setting in by_setting):
            rows = next(r for setting, r in by_setting.items() if setting.routing == routing)
            print(
                "  " + separation([rows[i] for i in sorted(ids)], f"separation ({routing} routing's grades)")
            )
        print()
    if args.markdown:
        print(markdown_table(by_setting, common) + "\n")
    print(first_runs(first_rows) + "\n")
    if not common & DEV_IDS:
        return
    dev = [
        summarise(setting, [rows[i] for i in sorted(common & DEV_IDS)])
        for setting, rows in by_setting.items()
    ]
    chosen = recommend(dev)
    if chosen is None:
        return
    chosen_setting = next(s for s in by_setting if s.label == chosen["label"])
    print(
        f"chosen on the development part: {chosen['label']} "
        f"(accuracy {chosen['accuracy']:.0%}, {chosen['llm_calls_mean']} calls/question)"
    )
    held = sorted(common - DEV_IDS)
    if held:
        print("on the held-out part:")
        print("  " + line(f"chosen: {chosen_setting.label}", [by_setting[chosen_setting][i] for i in held]))
        if DEFAULT in by_setting:
            print("  " + line(f"default: {DEFAULT.label}", [by_setting[DEFAULT][i] for i in held]))


if __name__ == "__main__":
    main()
