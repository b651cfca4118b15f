"""RecTools on the golden datasets.

RecTools' relevance is binary: every interaction is relevant, so the runner passes the items
graded >= 1. It takes ranks, not scores: the runner ranks by score descending with ties broken
by item ascending (recframe's rule), so ties say nothing about RecTools. Its metrics are over
the users in the interactions. Intersection compares the lists with the baseline model's
(baseline.csv), ranked the same way.
"""

from __future__ import annotations

import pandas as pd
from _common import Writer, args, cutoffs, load, load_baseline, load_side, ranked
from rectools import Columns
from rectools.metrics import (
    MAP,
    MRR,
    NDCG,
    AvgRecPopularity,
    CatalogCoverage,
    F1Beta,
    HitRate,
    Intersection,
    IntraListDiversity,
    MeanInvUserFreq,
    Precision,
    Recall,
    Serendipity,
)
from rectools.metrics.distances import PairwiseHammingDistanceCalculator

in_dir, out = args()
ks = cutoffs(in_dir)


def metrics(k: int):
    """(RecTools metric, recframe metric) at k; the non-default variants are tested with the
    matching recframe option given explicitly."""
    return [
        (Precision(k=k), "precision"),
        (Precision(k=k, r_precision=True), "precision"),  # hits@k / min(k, R)
        (Recall(k=k), "recall"),
        (F1Beta(k=k), "f1"),
        (HitRate(k=k), "hit_rate"),
        (MAP(k=k), "ap"),
        (MAP(k=k, divide_by_k=True), "ap"),
        (MRR(k=k), "rr"),
        (NDCG(k=k), "ndcg"),
        (NDCG(k=k, divide_by_achievable=True), "ndcg"),
    ]


def beyond(k: int, features: pd.DataFrame):
    """(RecTools metric, recframe metric, its inputs) at k: "train" (prev_interactions),
    "reco" alone, or "catalog"."""
    hamming = PairwiseHammingDistanceCalculator(features)
    return [
        (MeanInvUserFreq(k=k), "novelty", "train"),
        (AvgRecPopularity(k=k), "popularity", "train"),
        (AvgRecPopularity(k=k, normalize=True), "popularity", "train"),
        (IntraListDiversity(k=k, distance_calculator=hamming), "ild", "reco"),
    ]


side = load_side(in_dir)
baselines = load_baseline(in_dir)


def as_reco(recs: dict) -> pd.DataFrame:
    """RecTools' reco table: ranks from the scores by _common.ranked (ties by item ascending)."""
    return pd.DataFrame(
        [(user, item, rank) for user, items in recs.items() for rank, item in enumerate(ranked(items), start=1)],
        columns=[Columns.User, Columns.Item, Columns.Rank],
    )


w = Writer(out)
for dataset, (recs, truth) in load(in_dir).items():
    reco = as_reco(recs)
    interactions = pd.DataFrame(
        [(user, item) for user, items in truth.items() for item, grade in items.items() if grade >= 1],
        columns=[Columns.User, Columns.Item],
    )
    for k in ks:
        for metric, name in metrics(k):
            per_user = metric.calc_per_user(reco, interactions)
            for user in sorted(per_user.index):
                w.row(dataset, "per_user", user, name, k, repr(metric), per_user[user])
            w.row(dataset, "mean", None, name, k, repr(metric), metric.calc(reco, interactions))
    pairs, catalog = side[dataset]
    train = pd.DataFrame(pairs, columns=[Columns.User, Columns.Item])
    features = pd.DataFrame([(item, *f) for item, f in catalog.items()], columns=[Columns.Item, "f1", "f2"])
    features = features.set_index(Columns.Item)
    for k in ks:
        for metric, name, needs in beyond(k, features):
            given = (reco, train) if needs == "train" else (reco,)
            per_user = metric.calc_per_user(*given)
            # (the distance calculator's repr holds its address: named instead)
            label = repr(metric).split(", distance_calculator=")[0] + (", hamming)" if name == "ild" else "")
            for user in sorted(per_user.index):
                w.row(dataset, "per_user", user, name, k, label, per_user[user])
            w.row(dataset, "mean", None, name, k, label, metric.calc(*given))
        serendipity = Serendipity(k=k)
        given_s = (reco, interactions, train, list(catalog))
        per_user = serendipity.calc_per_user(*given_s)
        for user in sorted(per_user.index):
            w.row(dataset, "per_user", user, "serendipity", k, repr(serendipity), per_user[user])
        w.row(dataset, "mean", None, "serendipity", k, repr(serendipity), serendipity.calc(*given_s))
        # the share of the top k in the baseline model's top k (ref_k = k)
        intersection = Intersection(k=k)
        ref_reco = as_reco(baselines[dataset])
        per_user = intersection.calc_per_user(reco, ref_reco)
        for user in sorted(per_user.index):
            w.row(dataset, "per_user", user, "intersection", k, repr(intersection), per_user[user])
        w.row(dataset, "mean", None, "intersection", k, repr(intersection), intersection.calc(reco, ref_reco))
        # one value per model: the mean row only
        coverage = CatalogCoverage(k=k, normalize=True)
        w.row(dataset, "mean", None, "catalog_coverage", k, repr(coverage), coverage.calc(reco, list(catalog)))
w.close()
