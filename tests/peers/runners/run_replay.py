"""RePlay (PyPI: replay-rec) on the golden datasets.

RePlay's relevance is binary: the ground truth is the items graded >= 1. It ranks by score
descending, ties by item id descending, and evaluates the users that have recommendations
(a user without relevant items scores 0).
"""

from __future__ import annotations

import pandas as pd
from _common import Writer, args, cutoffs, load
from replay.metrics import MAP, MRR, NDCG, HitRate, Precision, Recall
from replay.metrics.descriptors import PerUser

in_dir, out = args()
ks = cutoffs(in_dir)
METRICS = [(Precision, "precision"), (Recall, "recall"), (HitRate, "hit_rate"), (MAP, "ap"), (MRR, "rr"), (NDCG, "ndcg")]

w = Writer(out)
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
        means = cls(topk=ks)(recommendations, ground_truth)
        per_user = cls(topk=ks, mode=PerUser())(recommendations, ground_truth)
        for k in ks:
            label = f"{cls.__name__}@{k}"
            values = per_user[f"{cls.__name__}-PerUser@{k}"]
            for user in sorted(values):
                w.row(dataset, "per_user", user, name, k, label, values[user])
            w.row(dataset, "mean", None, name, k, label, means[f"{cls.__name__}@{k}"])
w.close()
