"""trec_eval, through pytrec_eval (PyPI: pytrec-eval-terrier), on the golden datasets.

trec_eval reads the run's scores as C floats (float32), ranks by score descending with ties
broken by document id descending, counts a doc relevant when its grade >= 1, and evaluates only
queries that are in both the run and the qrels. Its means are over those queries.
"""

from __future__ import annotations

import pytrec_eval
from _common import Writer, args, cutoffs, load

in_dir, out = args()
ks = cutoffs(in_dir)
cut = ",".join(map(str, ks))
# (trec_eval measure family, recframe metric, has cut-off)
FAMILIES = [("P", "precision"), ("recall", "recall"), ("map_cut", "ap"), ("ndcg_cut", "ndcg"), ("success", "hit_rate")]
MEASURES = {f"{family}.{cut}" for family, _ in FAMILIES} | {"recip_rank", "Rprec"}

w = Writer(out)
for dataset, (recs, truth) in load(in_dir).items():
    result = pytrec_eval.RelevanceEvaluator(truth, MEASURES).evaluate(recs)
    # (peer measure, recframe metric, k)
    names = [(f"{family}_{k}", metric, k) for family, metric in FAMILIES for k in ks]
    names += [("recip_rank", "rr", k) for k in ks]  # trec_eval's recip_rank has no cut-off
    names += [("Rprec", "r_precision", None)]
    for measure, metric, k in names:
        values = {user: scores[measure] for user, scores in result.items()}
        for user in sorted(values):
            w.row(dataset, "per_user", user, metric, k, measure, values[user])
        mean = pytrec_eval.compute_aggregated_measure(measure, list(values.values()))
        w.row(dataset, "mean", None, metric, k, measure, mean)
w.close()
