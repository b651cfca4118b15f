"""RePlay (PyPI: replay-rec) on the golden datasets.

RePlay's relevance is binary: the ground truth is the items graded >= 1. It ranks by score
descending, ties by item id descending, and evaluates the users that have recommendations
(a user without relevant items scores 0).
"""

from __future__ import annotations

import pandas as pd
from _common import Writer, args, cutoffs, load, load_baseline, load_side
from replay.metrics import (
    MAP,
    MRR,
    NDCG,
    CategoricalDiversity,
    HitRate,
    Precision,
    Recall,
    RocAuc,
    Surprisal,
    Unexpectedness,
)
from replay.metrics.descriptors import PerUser

in_dir, out = args()
ks = cutoffs(in_dir)
METRICS = [
    *((Precision, "precision"), (Recall, "recall"), (HitRate, "hit_rate"), (MAP, "ap"), (MRR, "rr"), (NDCG, "ndcg")),
    (RocAuc, "auc"),
]

side = load_side(in_dir)
baselines = load_baseline(in_dir)
w = Writer(out)


def write(dataset: str, name: str, cls: type, *data: pd.DataFrame) -> None:
    """The rows of RePlay metric `cls` on `data`: its mean and per-user values at every k."""
    means, per_user = cls(topk=ks)(*data), cls(topk=ks, mode=PerUser())(*data)
    for k in ks:
        label = f"{cls.__name__}@{k}"
        values = per_user[f"{cls.__name__}-PerUser@{k}"]
        for user in sorted(values):
            w.row(dataset, "per_user", user, name, k, label, values[user])
        w.row(dataset, "mean", None, name, k, label, means[f"{cls.__name__}@{k}"])


for dataset, (recs, truth) in load(in_dir).items():
    recommendations = pd.DataFrame(
        [(user, item, score) for user, items in recs.items() for item, score in items.items()],
        columns=["query_id", "item_id", "rating"],
    )
    ground_truth = pd.DataFrame(
        [(user, item) for user, items in truth.items() for item, grade in items.items() if grade >= 1],
        columns=["query_id", "item_id"],
    )
    for cls, name in METRICS:
        write(dataset, name, cls, recommendations, ground_truth)
    # beyond accuracy: Surprisal over the training pairs; CategoricalDiversity over each
    # item's category, its two features taken together
    pairs, catalog = side[dataset]
    train = pd.DataFrame(pairs, columns=["query_id", "item_id"])
    write(dataset, "novelty", Surprisal, recommendations, train)
    # the category rows keep no item, so RePlay would break score ties by category: they get
    # the rank of their item in RePlay's own order instead (score, then item, descending)
    ordered = recommendations.sort_values(["query_id", "rating", "item_id"], ascending=[True, False, False])
    ordered = ordered.assign(rating=-ordered.groupby("query_id").cumcount().astype(float))
    categories = ordered.assign(category_id=[f"{catalog[i][0]}{catalog[i][1]}" for i in ordered["item_id"]])
    categories = categories[["query_id", "category_id", "rating"]]
    write(dataset, "category_diversity", CategoricalDiversity, categories)
    # against the baseline model's lists, both ranked by RePlay (score, then item, descending);
    # every user has a baseline list (RePlay gives 0 to a user without one)
    base = pd.DataFrame(
        [(user, item, score) for user, items in baselines[dataset].items() for item, score in items.items()],
        columns=["query_id", "item_id", "rating"],
    )
    write(dataset, "unexpectedness", Unexpectedness, recommendations, base)
w.close()
