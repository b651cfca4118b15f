"""What every peer runner shares: reading the datasets, writing the results.

Runners run inside the peer's own virtual environment, so this module uses the standard library
only. Each runner (``run_<peer>.py``, named so that it does not shadow the peer package) is called as ``python run_<peer>.py IN_DIR OUT_CSV`` by ``make_golden.py``:
IN_DIR holds ``recs.csv`` (dataset, user, item, score), ``truth.csv`` (dataset, user, item,
grade), ``ks.json`` (the cut-offs), the side inputs ``train.csv`` and ``items.csv`` and
``baseline.csv`` (dataset, user, item, score: a second model's lists); OUT_CSV gets one row
per value the peer computed.
"""

from __future__ import annotations

import csv
import json
import sys
from collections import defaultdict
from pathlib import Path

# Rows of OUT_CSV: scope is "per_user" or "mean" (user empty); metric is recframe's name, k is
# empty for a metric without cut-off; peer_metric is the peer's own name for what it computed.
FIELDS = ("dataset", "scope", "user", "metric", "k", "peer_metric", "value")

Recs = dict[str, dict[str, float]]  # user -> item -> score
Truth = dict[str, dict[str, int]]  # user -> item -> grade


def args() -> tuple[Path, Path]:
    return Path(sys.argv[1]), Path(sys.argv[2])


def cutoffs(in_dir: Path) -> list[int]:
    return json.loads((in_dir / "ks.json").read_text())


def load(in_dir: Path) -> dict[str, tuple[Recs, Truth]]:
    """dataset -> (recs, truth), users and items as strings, scores as float, grades as int."""
    data: dict[str, tuple[Recs, Truth]] = defaultdict(lambda: (defaultdict(dict), defaultdict(dict)))
    with open(in_dir / "recs.csv", newline="") as f:
        for row in csv.DictReader(f):
            data[row["dataset"]][0][row["user"]][row["item"]] = float(row["score"])
    with open(in_dir / "truth.csv", newline="") as f:
        for row in csv.DictReader(f):
            data[row["dataset"]][1][row["user"]][row["item"]] = int(row["grade"])
    return {name: (dict(recs), dict(truth)) for name, (recs, truth) in sorted(data.items())}


def load_side(in_dir: Path) -> dict[str, tuple[list[tuple[str, str]], dict[str, tuple[int, ...]]]]:
    """dataset -> (training (user, item) pairs, item -> its features (f1, f2)), for the
    beyond-accuracy metrics."""
    train: dict[str, list[tuple[str, str]]] = defaultdict(list)
    items: dict[str, dict[str, tuple[int, ...]]] = defaultdict(dict)
    with open(in_dir / "train.csv", newline="") as f:
        for row in csv.DictReader(f):
            train[row["dataset"]].append((row["user"], row["item"]))
    with open(in_dir / "items.csv", newline="") as f:
        for row in csv.DictReader(f):
            items[row["dataset"]][row["item"]] = (int(row["f1"]), int(row["f2"]))
    return {name: (train[name], items[name]) for name in sorted(train)}


def load_baseline(in_dir: Path) -> dict[str, Recs]:
    """dataset -> the baseline model's recs (user -> item -> score), for the metrics that
    compare the lists with another model's."""
    base: dict[str, Recs] = defaultdict(lambda: defaultdict(dict))
    with open(in_dir / "baseline.csv", newline="") as f:
        for row in csv.DictReader(f):
            base[row["dataset"]][row["user"]][row["item"]] = float(row["score"])
    return {name: dict(recs) for name, recs in sorted(base.items())}


def ranked(items: dict[str, float]) -> list[str]:
    """Items by score descending, ties by item ascending: recframe's documented rule, used by
    runners whose peer takes ranks rather than scores (the tie rule is then not the peer's)."""
    return [item for item, _ in sorted(items.items(), key=lambda kv: (-kv[1], kv[0]))]


class Writer:
    def __init__(self, path: Path) -> None:
        self._file = open(path, "w", newline="")
        self._csv = csv.writer(self._file)
        self._csv.writerow(FIELDS)

    def row(self, dataset: str, scope: str, user: str | None, metric: str, k: int | None, peer_metric: str, value: float) -> None:
        # repr round-trips a float exactly
        self._csv.writerow([dataset, scope, user or "", metric, "" if k is None else k, peer_metric, repr(float(value))])

    def close(self) -> None:
        self._file.close()
