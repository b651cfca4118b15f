"""Regenerate the golden files: every peer library's own numbers on a few seeded datasets.

Usage (from the repository root, with recframe's test dependencies installed)::

    python tests/peers/make_golden.py                   # every peer
    python tests/peers/make_golden.py ranx trec_eval9   # some peers
    python tests/peers/make_golden.py --venvs DIR       # keep the peer environments in DIR

Each peer runs in its own virtual environment (RecTools needs numpy < 2 and pandas < 3,
RePlay polars < 2, ...), created under ``~/.cache/recframe-peers/<peer>`` unless ``--venvs`` says
otherwise, with the pinned version below installed from PyPI (with ``uv`` when it is on the
PATH, else ``python -m venv`` and pip). The script writes the datasets to a temporary folder as
CSV, runs ``runners/run_<peer>.py`` with that environment's python, and writes

* ``golden/datasets.parquet``: the input, one row per (dataset, user, item), with the score
  (null = not recommended) and the grade (null = not judged);
* ``golden/train.parquet`` and ``golden/items.parquet``: the side inputs of the beyond-accuracy
  metrics, per dataset: training (user, item) pairs, and the catalog with two 0/1 features;
* ``golden/baseline.parquet``: a second model's lists (dataset, user, item, score), the baseline
  that ``intersection`` and ``unexpectedness`` compare the datasets' lists with;
* ``golden/<peer>.parquet``: the peer's per-user values and means, long format (dataset, scope,
  user, metric, k, peer_metric, value), scope "per_user" or "mean";
* ``golden/versions.json``: peer -> the version that computed its file.

The tests (``tests/test_golden.py``) read these files only, so they need no peer installed.
The files regenerate byte for byte: seeded data, sorted rows, fixed parquet settings.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
RUNNERS = HERE / "runners"
KS = [1, 3, 5, 10]


@dataclass(frozen=True)
class Peer:
    distribution: str  # the PyPI name whose version is recorded
    requirements: tuple[str, ...]
    #: installed with --no-deps after `requirements`, when the package's full dependencies are
    #: far heavier than the module the runner imports
    no_deps: tuple[str, ...] = ()


PEERS: dict[str, Peer] = {
    "trec_eval9": Peer("pytrec-eval-terrier", ("pytrec-eval-terrier==0.5.11",)),
    "ranx": Peer("ranx", ("ranx==0.3.21",)),
    "rectools": Peer("rectools", ("rectools==0.19.0", "numpy<2", "pandas<3")),
    "replay": Peer("replay-rec", ("replay-rec==0.22.0",)),
    # recommenders' full dependency list (torch, transformers, ...) is far heavier than the
    # python_evaluation module the runner imports, whose own imports are these
    "recommenders": Peer(
        "recommenders",
        ("numpy<2", "pandas>2,<3", "scikit-learn", "scipy"),
        no_deps=("recommenders==1.2.1",),
    ),
    # LensKit needs torch; PyPI's torch wheels bring CUDA libraries (a few GB, in this cache only)
    "lenskit": Peer("lenskit", ("lenskit==2025.8.1",)),
    # Evidently 0.7.23 imports a helper that pandas 3 removed
    "evidently": Peer("evidently", ("evidently==0.7.23", "pandas<3")),
}

# --- data -----------------------------------------------------------------------------------

#: name -> (seed, how scores are drawn)
DATASETS = {
    "ties": (11, "ties"),  # scores from {1, ..., 4}: many ties within a list
    "distinct": (12, "distinct"),  # continuous scores: no ties
    "float32_ties": (13, "float32"),  # pairs of scores equal in float32 but not in float64
}


def draw_scores(rng: np.random.Generator, scores: str, size: int) -> np.ndarray:
    """`size` scores of one list, drawn as the dataset's kind says (see DATASETS)."""
    if scores == "ties":
        return rng.integers(1, 5, size=size).astype(float)
    if scores == "distinct":
        return rng.random(size)
    # distinct doubles 1e-9 apart that round to the same float32
    values = np.repeat(np.arange(1, size // 2 + 2), 2)[:size].astype(float)
    return rng.permutation(values + np.tile([0.0, 1e-9], size)[:size])


def make_dataset(seed: int, scores: str, n_users: int = 24, pool: int = 30) -> pl.DataFrame:
    """One row per (user, item) recommended or judged: score (null = not recommended) and grade
    (0-3, null = not judged). Covers ties, graded relevance, users whose judged items are all
    grade 0 (no relevant item) and users with relevant items but no recommendation."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(n_users):
        user = f"u{u:02d}"
        kind = u % 6  # 0: no recommendation; 1: no relevant item; others: ordinary
        size = 0 if kind == 0 else int(rng.integers(1, 16))  # lists longer than the largest k
        recommended = rng.choice(pool, size=size, replace=False)
        values = draw_scores(rng, scores, size)
        judged = rng.choice(pool, size=int(rng.integers(1, 10)), replace=False)
        grades = np.zeros(judged.size, dtype=int) if kind == 1 else rng.integers(0, 4, size=judged.size)
        if kind != 1 and grades.max() == 0:
            grades[0] = int(rng.integers(1, 4))
        score_of = {f"i{i:02d}": float(s) for i, s in zip(recommended, values)}
        grade_of = {f"i{i:02d}": int(g) for i, g in zip(judged, grades)}
        for item in sorted(score_of.keys() | grade_of.keys()):
            rows.append((user, item, score_of.get(item), grade_of.get(item)))
    schema = {"user": pl.String, "item": pl.String, "score": pl.Float64, "grade": pl.Int64}
    return pl.DataFrame(rows, schema=schema, orient="row")


def side_inputs(seed: int, n_users: int = 24, pool: int = 30) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The beyond-accuracy metrics' side inputs of one dataset: training (user, item) pairs
    over more users than the test (popularity skewed towards low item numbers, items of the
    pool never trained on) and the catalog, every item of the pool with two 0/1 features."""
    rng = np.random.default_rng(seed + 100)
    pairs = {(f"t{rng.integers(0, 2 * n_users):02d}", f"i{min(int(rng.exponential(8)), pool - 3):02d}") for _ in range(160)}
    train = pl.DataFrame(sorted(pairs), schema={"user": pl.String, "item": pl.String}, orient="row")
    items = pl.DataFrame(
        {
            "item": [f"i{i:02d}" for i in range(pool)],
            "f1": rng.integers(0, 2, size=pool),
            "f2": rng.integers(0, 2, size=pool),
        }
    )
    return train, items


def baseline_model(seed: int, scores: str, n_users: int = 24, pool: int = 30) -> pl.DataFrame:
    """A baseline model's lists for one dataset, from its own seed: every user (those without
    a recommendation in the dataset too) gets 1-15 items of the pool, scored as the dataset
    is (so with ties where it has them). Every user has a baseline list because RePlay's
    Unexpectedness gives 0 to a user without one, where recframe counts no overlap (1)."""
    rng = np.random.default_rng(seed + 200)
    rows = []
    for u in range(n_users):
        size = int(rng.integers(1, 16))
        recommended = rng.choice(pool, size=size, replace=False)
        values = draw_scores(rng, scores, size)
        rows += sorted((f"u{u:02d}", f"i{i:02d}", float(v)) for i, v in zip(recommended, values))
    return pl.DataFrame(rows, schema={"user": pl.String, "item": pl.String, "score": pl.Float64}, orient="row")


def baselines() -> pl.DataFrame:
    """The baseline model of every dataset, with its name."""
    frames = [baseline_model(seed, how).select(pl.lit(name).alias("dataset"), pl.all()) for name, (seed, how) in DATASETS.items()]
    return pl.concat(frames).sort("dataset", "user", "item")


def sides() -> tuple[pl.DataFrame, pl.DataFrame]:
    """(train, items) of every dataset, with its name."""
    parts = [side_inputs(seed) for seed, _ in DATASETS.values()]
    train = pl.concat([t.select(pl.lit(name).alias("dataset"), pl.all()) for name, (t, _) in zip(DATASETS, parts)])
    items = pl.concat([i.select(pl.lit(name).alias("dataset"), pl.all()) for name, (_, i) in zip(DATASETS, parts)])
    return train, items


def datasets() -> pl.DataFrame:
    frames = [make_dataset(seed, how).select(pl.lit(name).alias("dataset"), pl.all()) for name, (seed, how) in DATASETS.items()]
    return pl.concat(frames).sort("dataset", "user", "item")


def write_inputs(data: pl.DataFrame, folder: Path, train: pl.DataFrame, items: pl.DataFrame, baseline: pl.DataFrame) -> None:
    # CSV so that every runner can read it with the standard library; repr() keeps floats exact
    recs = data.filter(pl.col("score").is_not_null()).select("dataset", "user", "item", "score")
    truth = data.filter(pl.col("grade").is_not_null()).select("dataset", "user", "item", "grade")
    inputs = (("recs.csv", recs), ("truth.csv", truth), ("train.csv", train), ("items.csv", items), ("baseline.csv", baseline))
    for name, frame in inputs:
        lines = [",".join(frame.columns)] + [
            ",".join(repr(v) if isinstance(v, float) else str(v) for v in row) for row in frame.iter_rows()
        ]
        (folder / name).write_text("\n".join(lines) + "\n")
    (folder / "ks.json").write_text(json.dumps(KS))


# --- peer environments ----------------------------------------------------------------------


def run(cmd: list[str], **kwargs) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)


def environment(name: str, peer: Peer, venvs: Path) -> Path:
    """The peer's python, creating its environment if it is missing or installed differently."""
    venv = venvs / name
    python = venv / "bin" / "python"
    wanted = json.dumps([peer.requirements, peer.no_deps])
    marker = venv / "recframe-requirements.json"
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return python
    shutil.rmtree(venv, ignore_errors=True)
    uv = shutil.which("uv")
    if uv:
        run([uv, "venv", "--python", "3.11", str(venv)])
        install = [uv, "pip", "install", "--python", str(python)]
    else:
        run([sys.executable, "-m", "venv", str(venv)])
        install = [str(python), "-m", "pip", "install", "--quiet"]
    run([*install, *peer.requirements])
    if peer.no_deps:
        run([*install, "--no-deps", *peer.no_deps])
    marker.write_text(wanted)
    return python


def version(python: Path, distribution: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({distribution!r}))"
    return subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True).stdout.strip()


def golden_frame(csv_path: Path) -> pl.DataFrame:
    schema = {
        "dataset": pl.String,
        "scope": pl.String,
        "user": pl.String,
        "metric": pl.String,
        "k": pl.Int64,
        "peer_metric": pl.String,
        "value": pl.Float64,
    }
    frame = pl.read_csv(csv_path, schema=schema)
    return frame.sort("dataset", "scope", "metric", "k", "peer_metric", "user", nulls_last=False)


def write_parquet(frame: pl.DataFrame, path: Path) -> None:
    # fixed settings so that the same rows give the same bytes
    frame.write_parquet(path, compression="zstd", compression_level=3, statistics=False, row_group_size=1_000_000)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("peers", nargs="*", help=f"peers to run, any of {', '.join(PEERS)} (default: all)", metavar="peer")
    parser.add_argument(
        "--venvs", type=Path, default=Path.home() / ".cache" / "recframe-peers", help="folder of the peer environments"
    )
    args = parser.parse_args(argv)
    names = args.peers or list(PEERS)
    unknown = [n for n in names if n not in PEERS]
    if unknown:
        parser.error(f"unknown peer(s) {unknown}; choose from {list(PEERS)}")

    GOLDEN.mkdir(exist_ok=True)
    data = datasets()
    write_parquet(data, GOLDEN / "datasets.parquet")
    train, items = sides()
    write_parquet(train, GOLDEN / "train.parquet")
    write_parquet(items, GOLDEN / "items.parquet")
    baseline = baselines()
    write_parquet(baseline, GOLDEN / "baseline.parquet")
    versions_path = GOLDEN / "versions.json"
    versions = json.loads(versions_path.read_text()) if versions_path.exists() else {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_inputs(data, folder, train, items, baseline)
        for name in names:
            python = environment(name, PEERS[name], args.venvs)
            out = folder / f"{name}.csv"
            env = {**os.environ, "PYTHONHASHSEED": "0"}
            run([str(python), str(RUNNERS / f"run_{name}.py"), str(folder), str(out)], env=env, cwd=RUNNERS)
            write_parquet(golden_frame(out), GOLDEN / f"{name}.parquet")
            versions[name] = {"distribution": PEERS[name].distribution, "version": version(python, PEERS[name].distribution)}
    versions_path.write_text(json.dumps(dict(sorted(versions.items())), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
