"""Evidently on the golden datasets: its RecSys metrics that recframe reproduces.

Evidently takes one table of (user, item, prediction, target) rows: here every row of the
dataset (recommended or judged), the target its grade (0 when not judged). Predictions are
ranks: the runner ranks by score descending with ties broken by item ascending (recframe's
rule), so ties say nothing about Evidently; an item judged but not recommended gets a rank
beyond every k. Its ranking metrics report one value per k and model, never per user, so the
file holds means only. Recall, HitRate and MRR binarise the target (> 0); NDCG uses the grade as
gain. By default (``no_feedback_users=False``) they average the users with a relevant item;
``no_feedback_users=True`` adds every other user of the table, scored 0.

Novelty and PopularityBias's ARP read the training pairs (``additional_data``'s
``current_train_data``): an item's popularity is its distinct training users, the items of a
top k absent from the training data are dropped, and the mean is over the users with a training
item in their top k (recframe's ``cold_items="skip"``). ARP is left out under
``normalize_arp=True``, which divides by the largest item popularity (recframe's
``popularity="share"`` divides by the training pairs), as are its coverage (over the training
items) and Gini (over the recommended items only).

Left out because their definitions differ from recframe's (see docs/beyond.md): PrecisionTopK
(divides by min(k, the user's rows)), FBetaTopK (from the mean precision and recall), MAP
(takes the relevance at cut-off j from the last row ranked <= j in the table's order, so a
short list's last item counts again past its end: it agrees here only because no list
shorter than k ends with a relevant item), Personalization (assumes full lists), Diversity
(sums the cosine distances over the list length) and Serendipity (feature based).
"""

from __future__ import annotations

import pandas as pd
from _common import Writer, args, cutoffs, load, load_side, ranked
from evidently import DataDefinition, Dataset, Report
from evidently.core.datasets import Recsys
from evidently.metrics import MRR, NDCG, HitRate, Novelty, PopularityBiasMetric, RecallTopK

in_dir, out = args()
ks = cutoffs(in_dir)
METRICS = [(RecallTopK, "recall"), (HitRate, "hit_rate"), (MRR, "rr"), (NDCG, "ndcg")]
DISPLAY = {RecallTopK: "Recall@k", HitRate: "HitRate@k", MRR: "MRR@k", NDCG: "NDCG@k"}
#: the rank of a judged item that is not recommended: beyond every k
NOT_RECOMMENDED = 10**6

w = Writer(out)
side = load_side(in_dir)
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
    # the beyond-accuracy metrics, from the training pairs
    train = Dataset.from_pandas(pd.DataFrame(side[dataset][0], columns=["user_id", "item_id"]))
    for k in ks:
        # PopularityBiasMetric's default: metric="arp", normalize_arp=False
        beyond = [(Novelty(k=k), "novelty"), (PopularityBiasMetric(k=k), "popularity")]
        snapshot = Report([metric for metric, _ in beyond]).run(data, None, additional_data={"current_train_data": train})
        results = list(snapshot.metric_results.values())
        for (metric, name), result in zip(beyond, results, strict=True):
            w.row(dataset, "mean", None, name, k, f"{type(metric).__name__}(k={k})", result.value)
w.close()
