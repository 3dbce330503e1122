"""What several benchmarks share: where the data is, the audit's development set and its two
halves, the CRAG development questions, and the Wilson 95% interval."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_PAPERS = ROOT.parent / "shared" / "papers"
SHARED_EVAL = ROOT.parent / "shared" / "eval"

AUDIT_DEV_SET = ROOT / "eval" / "audit_dev.jsonl"
KINDS = ("changed_number", "swapped_number", "invented_name", "invented_claim", "reversed_relation")
# Thresholds are chosen on these papers' sentences and reported on the other seven.
HALF_A = {
    "acl2007_P07-1088.pdf",
    "acl2014_P14-1059.pdf",
    "acl2020_s2orc_2020.acl-main.447.pdf",
    "acl2023_tutorial_goal_awareness_2023.acl-tutorials.1.pdf",
    "iop_jpcs2188_012011.pdf",
    "naacl2013_roark13.pdf",
    "neuron_perspective_rhythmic_attentional_scanning.pdf",
}

# The 27 questions of the first question set (eval/questions.jsonl), on which CRAG settings are chosen.
DEV_QUESTION_IDS = {f"a{n:02d}" for n in range(1, 20)} | {f"n{n:02d}" for n in range(1, 9)}


def load_dev_set(path: Path = AUDIT_DEV_SET) -> list[dict]:
    """The audit's development sentences (eval/audit_dev.jsonl), one dict each."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def ingested(app, names: list[str]) -> dict[str, str]:
    """File name -> stored paper id for these shared papers, ingesting the missing ones into the
    benchmark home (once: the home is kept between runs)."""
    from sqlalchemy import select

    from reader.ingest.pipeline import ingest_paths
    from reader.store.tables import Paper

    with app.services.db() as session:
        stored = {Path(p.source_path or "").name: p.id for p in session.scalars(select(Paper))}
    missing = [SHARED_PAPERS / name for name in names if name not in stored]
    if missing:
        print(f"ingesting {len(missing)} papers into {app.settings.home} …", file=sys.stderr, flush=True)
        for r in ingest_paths(missing, app.services.db, open_index=lambda: app.services.search_index):
            stored[Path(r.file).name] = r.paper_id
    return stored


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson 95% interval of k successes in n."""
    if n == 0:
        return 0.0, 0.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)
