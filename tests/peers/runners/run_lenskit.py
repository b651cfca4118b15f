"""LensKit (PyPI: lenskit) on the golden datasets.

LensKit measures one list per user in the run with ``RunAnalysis``; its test items are the
relevant ones, so the truth here is the items graded >= 1, with the grade as the ``grade``
field for graded nDCG. A user without recommendations has no list and is not measured. A user
whose list has no test items gets NaN from most metrics; ``list_metrics()`` and
``list_summary()`` fill NaN with each metric's default, 0, so those users score 0 and count.
LensKit takes lists already in order: they are ranked with recframe's tie rule.

``ListGini`` (a run-level value, mean rows only) is the Gini coefficient of the number of lists
each item appears in, over ``items`` items: given the catalog size, it is recframe's gini@k.
It runs in an analysis of its own, so that adding it leaves the other metrics' values alone.

Not run: ``lenskit.metrics.ranking.AveragePrecision``, which is not exported from
``lenskit.metrics`` and raises ZeroDivisionError on a list whose user has no test item;
``MeanPopRank`` (mean popularity-rank quantile), ``ExposureGini`` (rank-weighted exposure) and
``entropy`` (of item categories within a list), which recframe has no metric for. LensKit
2025.8.1 has no ``ILS``.
"""

from __future__ import annotations

import numpy as np
from _common import Writer, args, cutoffs, load, load_side, ranked
from lenskit.data import ItemList, ItemListCollection
from lenskit.metrics import DCG, NDCG, Hit, ListGini, Precision, Recall, RecipRank, RunAnalysis

in_dir, out = args()
ks = cutoffs(in_dir)
side = load_side(in_dir)

w = Writer(out)
for dataset, (recs, truth) in load(in_dir).items():
    outputs = ItemListCollection.from_dict(
        {user: ItemList(item_ids=ranked(items), ordered=True) for user, items in sorted(recs.items())}, key="user"
    )
    relevant = {user: {i: g for i, g in sorted(items.items()) if g >= 1} for user, items in sorted(truth.items())}
    test = ItemListCollection.from_dict(
        {
            user: ItemList(item_ids=list(items), grade=np.array(list(items.values()), dtype=np.float64))
            # a user with no relevant item gets an empty list that still has the field: LensKit's
            # graded DCG raises KeyError on a missing test list, which has none
            for user, items in relevant.items()
        },
        key="user",
    )
    analysis = RunAnalysis()
    labels = []  # (label, recframe metric, k)
    for k in ks:
        for metric, name in (
            (Precision(n=k), "precision"),
            (Recall(n=k), "recall"),
            (Hit(n=k), "hit_rate"),
            (RecipRank(n=k), "rr"),
            (NDCG(n=k), "ndcg"),
            (NDCG(n=k, gain="grade"), "ndcg"),
            (DCG(n=k), "dcg"),
            (DCG(n=k, gain="grade"), "dcg"),
        ):
            label = metric.label + ("(gain=grade)" if getattr(metric, "gain", None) else "")
            analysis.add_metric(metric, label=label)
            labels.append((label, name, k))
    result = analysis.measure(outputs, test)
    per_user = result.list_metrics(fill_missing=True)
    means = result.list_summary()["mean"]
    for label, name, k in labels:
        for user, value in per_user[label].sort_index().items():
            w.row(dataset, "per_user", str(user), name, k, label, value)
        w.row(dataset, "mean", None, name, k, label, means[label])
    # beyond accuracy: one value per run, over the catalog (every item of items.csv)
    _, catalog = side[dataset]
    beyond = RunAnalysis()
    for k in ks:
        beyond.add_metric(ListGini(n=k, items=len(catalog)))
    run_values = beyond.measure(outputs, test).global_metrics()
    for k in ks:
        label = ListGini(n=k, items=len(catalog)).label
        w.row(dataset, "mean", None, "gini", k, label, run_values[label])
w.close()
