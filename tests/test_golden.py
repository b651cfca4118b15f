"""recframe with each profile against the peer libraries' own numbers (tests/peers/golden).

The golden files were written by ``tests/peers/make_golden.py``, which ran each peer in its own
environment; these tests need no peer installed. For every dataset, every metric and k the peer
computed, recframe with ``profile=<peer>`` must give the same per-user values, for the same
users, and the same means.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

import recframe
from recframe.metrics import REGISTRY
from recframe.profiles import PROFILES

GOLDEN = Path(__file__).parent / "peers" / "golden"
VERSIONS = json.loads((GOLDEN / "versions.json").read_text())
PEERS = sorted(VERSIONS)
DATA = pl.read_parquet(GOLDEN / "datasets.parquet")
# the beyond-accuracy metrics' side inputs, per dataset
TRAIN = pl.read_parquet(GOLDEN / "train.parquet")
ITEMS = pl.read_parquet(GOLDEN / "items.parquet")
#: a second model's lists (dataset, user, item, score), the baseline of intersection and unexpectedness
BASELINE = pl.read_parquet(GOLDEN / "baseline.parquet")
#: the peers' beyond-accuracy metrics are over every user with a list, relevant items or not
BEYOND = ("MeanInvUserFreq", "AvgRecPopularity", "IntraListDiversity", "CatalogCoverage", "Serendipity", "Intersection")
BEYOND_REPLAY = ("Surprisal", "CategoricalDiversity", "Unexpectedness")
BEYOND_EVIDENTLY = ("Novelty", "PopularityBiasMetric")
DATASETS = sorted(DATA["dataset"].unique())
#: peers that report no per-user values: their golden rows are means only
MEANS_ONLY = ("evidently",)
# every peer here computes in double precision
TOLERANCE = 1e-9


def variant(peer: str, peer_metric: str) -> dict[str, str]:
    """Options a peer's non-default variant of a metric needs on top of the profile: these
    golden rows also prove that an explicit option overrides the profile."""
    if peer == "lenskit" and "(gain=grade)" in peer_metric:
        return {"gain": "linear"}
    if peer == "ranx" and "_burges" in peer_metric:
        return {"gain": "exp2"}
    if peer == "rectools" and "divide_by_k=True" in peer_metric:
        return {"ap_denominator": "k"}
    if peer == "rectools" and "divide_by_achievable=True" in peer_metric:
        return {"idcg": "relevant"}
    if peer == "rectools" and "r_precision=True" in peer_metric:
        return {"precision_denominator": "min_k_relevant"}
    if peer == "evidently" and "no_feedback_users=True" in peer_metric:
        return {"empty_users": "zero"}
    if peer == "evidently" and peer_metric.startswith(BEYOND_EVIDENTLY):
        return {"empty_users": "zero"}
    if peer == "replay" and peer_metric.startswith(BEYOND_REPLAY):
        return {"empty_users": "zero", **({"novelty": "surprisal"} if peer_metric.startswith("Surprisal") else {})}
    if peer_metric.startswith(BEYOND):
        return {"empty_users": "zero", **({"popularity": "share"} if "normalize=True" in peer_metric else {})}
    return {}


def golden(peer: str) -> pl.DataFrame:
    frame = pl.read_parquet(GOLDEN / f"{peer}.parquet")
    return frame.with_columns(
        pl.struct("peer_metric")
        .map_elements(lambda r: json.dumps(variant(peer, r["peer_metric"]), sort_keys=True), return_dtype=pl.String)
        .alias("variant"),
        pl.when(pl.col("k").is_null()).then(pl.col("metric")).otherwise(pl.format("{}@{}", "metric", "k")).alias("column"),
    )


def recframe_values(peer: str, dataset: str, options: dict, metrics: list[str], ks: list[int]):
    def of_dataset(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.filter(pl.col("dataset") == dataset).drop("dataset")

    frame = of_dataset(DATA)
    common = dict(k=ks, user="user", item="item", score="score", relevance="grade", profile=peer, **options)
    requires = {r for m in metrics for r in REGISTRY[m].requires}
    if requires:
        common |= {"train": of_dataset(TRAIN), "items": of_dataset(ITEMS), "item_features": ["f1", "f2"]}
    if "baseline" in requires:
        # two models: the dataset's lists (with the truth) as "main", the baseline's as "base"
        base = of_dataset(BASELINE).with_columns(pl.lit("base").alias("model"))
        frame = pl.concat([frame.with_columns(pl.lit("main").alias("model")), base], how="diagonal")
        common |= {"by": "model", "baseline": "base"}

    def main(out: pl.DataFrame) -> pl.DataFrame:
        return out.filter(pl.col("model") == "main").drop("model") if "baseline" in requires else out

    per_user_metrics = [m for m in metrics if REGISTRY[m].level == "user"]
    per_user = main(recframe.per_user(frame, metrics=per_user_metrics, **common)) if per_user_metrics else None
    return per_user, main(recframe.summary(frame, metrics=metrics, **common))


def close(a: float | None, b: float) -> bool:
    return a is not None and math.isclose(a, b, rel_tol=0, abs_tol=TOLERANCE)


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("peer", PEERS)
def test_profile_matches_peer(peer, dataset):
    rows = golden(peer).filter(pl.col("dataset") == dataset)
    assert rows.height, f"no golden rows for {peer} on {dataset}"
    problems = []
    for (options_json,), group in rows.group_by(["variant"], maintain_order=True):
        options = json.loads(options_json)
        metrics = sorted(group["metric"].unique())
        ks = sorted(k for k in group["k"].unique() if k is not None) or [10]
        ours, means = recframe_values(peer, dataset, options, metrics, ks)
        for (column, peer_metric), values in group.group_by(["column", "peer_metric"], maintain_order=True):
            per_user = values.filter(pl.col("scope") == "per_user")
            theirs = dict(per_user.select("user", "value").iter_rows())
            # users skipped under empty_users="skip" keep a 0.0 precision but are not evaluated
            skipped = options.get("empty_users", PROFILES[peer].options["empty_users"]) == "skip"
            # a group-level metric has means only, and so has every metric of a MEANS_ONLY peer
            if ours is not None and column in ours.columns and peer not in MEANS_ONLY:
                mine = {
                    u: v
                    for u, r, v in ours.select("user", "n_relevant", column).iter_rows()
                    if v is not None and not (skipped and r == 0)
                }
                if set(mine) != set(theirs):
                    only_mine, only_theirs = sorted(set(mine) - set(theirs)), sorted(set(theirs) - set(mine))
                    problems.append(f"{peer_metric}: users only in recframe {only_mine}, only in {peer} {only_theirs}")
                    continue
                wrong = {u: (theirs[u], mine[u]) for u in sorted(theirs) if not close(mine[u], theirs[u])}
                if wrong:
                    problems.append(f"{peer_metric} {options}: {{user: ({peer}, recframe)}} = {wrong}")
            mean = values.filter(pl.col("scope") == "mean")["value"].item()
            if not close(means[column].item(), mean):
                problems.append(f"{peer_metric} {options} mean: {peer} {mean}, recframe {means[column].item()}")
    assert not problems, "\n".join(problems)


def test_every_golden_peer_has_a_profile_marked_golden():
    assert set(PEERS) <= set(PROFILES)
    assert {name for name, p in PROFILES.items() if p.golden and name != "recframe"} == set(PEERS)
