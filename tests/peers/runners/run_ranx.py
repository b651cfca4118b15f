"""ranx on the golden datasets.

ranx takes the qrels and the run as dicts; ``make_comparable=True`` scores the qrels' users
that have no recommendations (0 on every metric) and drops run users without qrels. Its
"_burges" variants use the gain 2**grade - 1.
"""

from __future__ import annotations

from _common import Writer, args, cutoffs, load
from ranx import Qrels, Run, evaluate

in_dir, out = args()
ks = cutoffs(in_dir)
# (ranx metric, recframe metric)
FAMILIES = [
    ("precision", "precision"),
    ("recall", "recall"),
    ("f1", "f1"),
    ("hit_rate", "hit_rate"),
    ("map", "ap"),
    ("mrr", "rr"),
    ("ndcg", "ndcg"),
    ("dcg", "dcg"),
    ("ndcg_burges", "ndcg"),
    ("dcg_burges", "dcg"),
]
names = [(f"{family}@{k}", metric, k) for family, metric in FAMILIES for k in ks] + [("r-precision", "r_precision", None)]

w = Writer(out)
for dataset, (recs, truth) in load(in_dir).items():
    qrels, run = Qrels(truth), Run(recs)
    means = evaluate(qrels, run, [m for m, _, _ in names], make_comparable=True)
    for measure, metric, k in names:
        per_user = run.scores[measure]
        for user in sorted(per_user):
            w.row(dataset, "per_user", user, metric, k, measure, per_user[user])
        w.row(dataset, "mean", None, metric, k, measure, means[measure])
w.close()
