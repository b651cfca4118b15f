"""Microsoft Recommenders (PyPI: recommenders) on the golden datasets.

Its ranking metrics (``recommenders.evaluation.python_evaluation``) take the ground truth as
a table of relevant (user, item) rows, so the truth here is the items graded >= 1 (binary
relevance). They return a mean only; a user's own value is the same function called on that
user's rows alone. Which users a mean counts differs by metric, and the per-user rows written
here are exactly the users each mean counts:

* precision_at_k, recall_at_k and map_at_k average over the users that have both a
  recommendation and a relevant item;
* ndcg_at_k averages over every user with a relevant item, a user without recommendations
  scoring 0 (its ideal DCG comes from the whole truth table).

Scores are ranked by a pandas sort on (user, score descending), which keeps equal scores in
input order; rows are passed sorted by item, so ties fall by item ascending.
"""

from __future__ import annotations

import pandas as pd
from _common import Writer, args, cutoffs, load, load_side
from recommenders.evaluation.python_evaluation import (
    distributional_coverage,
    map_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
)

in_dir, out = args()
ks = cutoffs(in_dir)
METRICS = [(precision_at_k, "precision"), (recall_at_k, "recall"), (map_at_k, "ap"), (ndcg_at_k, "ndcg")]
COLUMNS = dict(col_user="userID", col_item="itemID", col_prediction="prediction", col_rating="rating")


def evaluate(fn, truth: pd.DataFrame, pred: pd.DataFrame, k: int) -> float:
    # map_at_k caches on its arguments; fresh copies keep one call from answering another
    return float(fn(truth.copy(), pred.copy(), k=k, relevancy_method="top_k", **COLUMNS))


side = load_side(in_dir)
w = Writer(out)
for dataset, (recs, truth) in load(in_dir).items():
    pred = pd.DataFrame(
        [(user, item, score) for user in sorted(recs) for item, score in sorted(recs[user].items())],
        columns=["userID", "itemID", "prediction"],
    )
    relevant = pd.DataFrame(
        [(user, item, float(grade)) for user in sorted(truth) for item, grade in sorted(truth[user].items()) if grade >= 1],
        columns=["userID", "itemID", "rating"],
    )
    # each user's rows, split once: a user's value is the function on those rows alone
    truth_of = dict(tuple(relevant.groupby("userID")))
    pred_of = dict(tuple(pred.groupby("userID")))
    no_pred = pred.iloc[:0]
    both = sorted(set(truth_of) & set(pred_of))
    for fn, name in METRICS:
        users = sorted(truth_of) if fn is ndcg_at_k else both
        for k in ks:
            label = f"{fn.__name__}(k={k})"
            for user in users:
                value = evaluate(fn, truth_of[user], pred_of.get(user, no_pred), k)
                w.row(dataset, "per_user", user, name, k, label, value)
            w.row(dataset, "mean", None, name, k, label, evaluate(fn, relevant, pred, k))
    # distributional coverage: the entropy of the recommended items over the rows it is given,
    # here each user's top k (ranked as the ranking metrics rank them)
    # (its train_df is only checked: no recommended pair may be a training pair)
    train = pd.DataFrame(side[dataset][0], columns=["userID", "itemID"])
    ranked = pred.sort_values(["userID", "prediction"], ascending=[True, False], kind="stable")
    for k in ks:
        top = ranked.groupby("userID").head(k)
        value = distributional_coverage(train, top, col_user="userID", col_item="itemID")
        w.row(dataset, "mean", None, "entropy", k, f"distributional_coverage(top {k})", value)
w.close()
