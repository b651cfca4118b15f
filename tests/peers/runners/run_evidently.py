"""Evidently on the golden datasets: its RecSys metrics that recframe reproduces.

Evidently takes one table of (user, item, prediction, target) rows: here every row of the
dataset (recommended or judged), the target its grade (0 when not judged). Predictions are
ranks: the runner ranks by score descending with ties broken by item ascending (recframe's
rule), so ties say nothing about Evidently; an item judged but not recommended gets a rank
beyond every k. Its ranking metrics report one value per k and model, never per user, so the
file holds means only. Recall, HitRate and MRR binarise the target (> 0); NDCG uses the grade as
gain. By default (``no_feedback_users=False``) they average the users with a relevant item;
``no_feedback_users=True`` adds every other user of the table, scored 0.

Left out because their definitions differ from recframe's (see docs/beyond.md): PrecisionTopK
(divides by min(k, the user's rows)), FBetaTopK (from the mean precision and recall), MAP
(takes the relevance at cut-off j from the last row ranked <= j in the table's order, so a
short list's last item counts again past its end: it agrees here only because no list
shorter than k ends with a relevant item), Novelty and
PopularityBias (drop items not in the training data; coverage over the training items, Gini
over the recommended items), Personalization (assumes full lists), Diversity (sums the cosine
distances over the list length) and Serendipity (feature based).
"""

from __future__ import annotations

import pandas as pd
from _common import Writer, args, cutoffs, load, ranked
from evidently import DataDefinition, Dataset, Report
from evidently.core.datasets import Recsys
from evidently.metrics import MRR, NDCG, HitRate, RecallTopK

in_dir, out = args()
ks = cutoffs(in_dir)
METRICS = [(RecallTopK, "recall"), (HitRate, "hit_rate"), (MRR, "rr"), (NDCG, "ndcg")]
DISPLAY = {RecallTopK: "Recall@k", HitRate: "HitRate@k", MRR: "MRR@k", NDCG: "NDCG@k"}
#: the rank of a judged item that is not recommended: beyond every k
NOT_RECOMMENDED = 10**6

w = Writer(out)
for dataset, (recs, truth) in load(in_dir).items():
    rows = []
    for user in sorted(recs.keys() | truth.keys()):
        order = ranked(recs.get(user, {}))
        grades = truth.get(user, {})
        rows += [(user, item, rank, grades.get(item, 0)) for rank, item in enumerate(order, start=1)]
        rows += [(user, item, NOT_RECOMMENDED, g) for item, g in sorted(grades.items()) if item not in order]
    frame = pd.DataFrame(rows, columns=["user_id", "item_id", "prediction", "target"])
    definition = DataDefinition(
        numerical_columns=["prediction", "target"],
        categorical_columns=["user_id", "item_id"],
        ranking=[Recsys(recommendations_type="rank")],
    )
    data = Dataset.from_pandas(frame, data_definition=definition)
    for k in ks:
        for no_feedback in (False, True):
            snapshot = Report([cls(k=k, no_feedback_users=no_feedback) for cls, _ in METRICS]).run(data, None)
            results = list(snapshot.metric_results.values())
            for (cls, name), result in zip(METRICS, results, strict=True):
                table = result.value
                assert result.display_name == DISPLAY[cls], (cls, result.display_name)
                # one row per cut-off 1, 2, ...; the rank column of MRR and NDCG is one too high
                # in 0.7.23 (their legacy series is indexed from 1, then shifted again)
                assert len(table) >= k and table["rank"].iloc[k - 1] in (k, k + 1), (name, table)
                label = f"{cls.__name__}(k={k}" + (", no_feedback_users=True)" if no_feedback else ")")
                w.row(dataset, "mean", None, name, k, label, table["value"].iloc[k - 1])
w.close()
