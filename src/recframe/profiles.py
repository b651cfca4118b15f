"""Profiles: the convention values that reproduce another library's numbers.

A profile sets every convention option of :func:`recframe.per_user` and :func:`recframe.summary`
to what one peer library does, and names the metrics that peer has. Pass ``profile="ranx"``;
an option given explicitly still wins over the profile. ``docs/conventions.md`` has the table
with a worked example of each disagreement; ``tests/peers/`` proves the profiles that are marked
``golden`` against the peer's own output.

>>> import recframe
>>> from recframe.profiles import PROFILES
>>> PROFILES["trec_eval"].options["ap_denominator"]
'relevant'
>>> sorted(PROFILES)
['evidently', 'lenskit', 'ranx', 'recframe', 'recommenders', 'rectools', 'replay', 'trec_eval', 'trec_eval9']
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from recframe.conventions import DEFAULTS
from recframe.errors import RecframeError, fix, ref
from recframe.metrics import REGISTRY, default_metrics


@dataclass(frozen=True)
class Profile:
    """One peer library's conventions and the metrics it has."""

    name: str
    #: the peer, as installed from PyPI
    peer: str
    #: metric names (as in recframe) the peer computes; None: every registered metric (recframe)
    metrics: frozenset[str] | None
    #: convention option -> value; options not named keep recframe's default
    overrides: dict[str, Any] = field(default_factory=dict)
    #: metrics the peer has without a cut-off only: their @k columns are not produced
    no_cutoff: frozenset[str] = frozenset()
    #: metric -> options that differ for that metric alone (the peer is not consistent);
    #: only ``unranked_users`` may be set this way
    per_metric: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: True when tests/peers/golden holds the peer's own numbers for this profile
    golden: bool = True

    @property
    def options(self) -> dict[str, Any]:
        """Every convention option, with this profile's values."""
        return {**DEFAULTS, **self.overrides}


def has_metric(profile: Profile, name: str) -> bool:
    """Whether the profile's peer has the metric (the recframe profile has every one)."""
    return profile.metrics is None or name in profile.metrics


#: the measures trec_eval has: P, recall, success, Rprec, map_cut, recip_rank, ndcg_cut; num_ret,
#: num_rel_ret, num_nonrel_judged_ret, bpref, infAP, iprec_at_recall, 11pt_avg, Rprec_mult, set_P,
#: set_recall, set_F, set_map, set_relative_P and binG. trec_eval 10.0's rbp (graded, its gains
#: rescaled to [0, 1]), rbp_resid (0 without an unjudged document) and unj_k (unjudged over k) are
#: not recframe's rbp, rbp_residual and judged: recframe.trec_eval computes them for the CLI
_TREC_METRICS = frozenset(
    {"precision", "recall", "hit_rate", "r_precision", "ap", "rr", "ndcg"}
    | {"num_ret", "num_rel_ret", "num_nonrel_judged_ret", "bpref", "infap", "iprec_at_recall"}
    | {"iprec_11pt_avg", "rprec_mult", "set_precision", "set_recall", "set_f1", "set_map"}
    | {"set_relative_precision", "bin_g"}
)
#: what trec_eval 9.x and 10.0 do alike
_TREC_OPTIONS = {
    "gain_threshold": "positive",  # -l applies to binary measures; nDCG keeps every grade
    "ap_denominator": "relevant",
    "rr_cutoff": False,
    "ties": "item_desc",
    "empty_users": "zero",
    "unranked_users": "skip",
    "unjudged_users": "skip",  # a query of the run without qrels is not evaluated
    "rank_gaps": "rerank",  # it orders by score: a rank column is never read
    "negative_relevance": "unjudged",  # a qrels grade < 0: in the pool, not judged
}
#: Rprec and the measures of the whole list
_TREC_NO_CUTOFF = frozenset({"r_precision", "num_ret", "num_rel_ret", "num_nonrel_judged_ret", "bpref"})


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("recframe", "recframe", None),
        Profile(
            "trec_eval",
            "trec_eval 10.0",
            _TREC_METRICS,
            {
                **_TREC_OPTIONS,
                "score_dtype": "float64",  # 10.0 reads the score as a double
                "recall_rounding": "round",  # 10.0: lround(x * R) in iprec_at_recall and 11pt_avg
            },
            no_cutoff=_TREC_NO_CUTOFF,
            # proved line for line against trec_eval 10.0's own test outputs (tests/test_trec_eval_files.py)
            golden=False,
        ),
        Profile(
            "trec_eval9",
            "pytrec-eval-terrier (trec_eval 9.0)",
            _TREC_METRICS,
            {**_TREC_OPTIONS, "score_dtype": "float32", "recall_rounding": "add_0.9"},  # 9.x: C floats, (long)(x * R + 0.9)
            no_cutoff=_TREC_NO_CUTOFF,
        ),
        Profile(
            "ranx",
            "ranx",
            frozenset({"precision", "recall", "f1", "hit_rate", "r_precision", "ap", "rr", "dcg", "ndcg"}),
            {"ap_denominator": "relevant", "empty_users": "zero", "rank_gaps": "rerank"},  # runs hold scores
            no_cutoff=frozenset({"r_precision"}),  # "r-precision"
        ),
        Profile(
            "rectools",
            "rectools",
            # Precision, Recall, F1Beta, HitRate, MAP, MRR, NDCG; MeanInvUserFreq, AvgRecPopularity,
            # IntraListDiversity (Hamming), Intersection, Serendipity, CatalogCoverage(normalize=True)
            frozenset(
                {"precision", "recall", "f1", "hit_rate", "ap", "rr", "ndcg"}
                | {"novelty", "popularity", "ild", "intersection", "serendipity", "catalog_coverage"}
            ),
            # its reco table's rank column is used as given, gaps and all
            {"ap_denominator": "relevant", "gain": "binary", "idcg": "k", "rank_gaps": "keep"},
        ),
        Profile(
            "replay",
            "replay-rec",
            # Precision, Recall, HitRate, MAP, MRR, NDCG, RocAuc; Surprisal (novelty="surprisal"),
            # CategoricalDiversity, Unexpectedness
            frozenset(
                {"precision", "recall", "hit_rate", "ap", "rr", "ndcg", "auc"}
                | {"novelty", "category_diversity", "unexpectedness"}
            ),
            {"gain": "binary", "ties": "item_desc", "rank_gaps": "rerank"},  # sorts by score
        ),
        Profile(
            "recommenders",
            "recommenders",
            # precision_at_k, recall_at_k, map_at_k, ndcg_at_k; distributional_coverage
            frozenset({"precision", "recall", "ap", "ndcg", "entropy"}),
            {"gain": "binary", "unranked_users": "skip", "rank_gaps": "rerank"},  # sorts by prediction
            # its ndcg_at_k takes the ideal DCG of every user in the truth, so a user without
            # recommendations scores 0 there and counts, while its other metrics skip that user
            per_metric={"ndcg": {"unranked_users": "zero"}},
        ),
        Profile(
            "lenskit",
            "lenskit",
            # Precision, Recall, Hit, RecipRank, DCG, NDCG (its AveragePrecision is left out: not
            # exported from lenskit.metrics, and it raises on a user with no test item); ListGini
            frozenset({"precision", "recall", "hit_rate", "rr", "dcg", "ndcg", "gini"}),
            {
                "precision_denominator": "retrieved",
                "recall_denominator": "min_k_relevant",
                "gain": "binary",
                "discount": "log2_max_rank_2",
                "empty_users": "zero",
                "unranked_users": "skip",
                "rank_gaps": "rerank",  # takes ordered lists: the rank is the position
            },
        ),
        Profile(
            "evidently",
            "evidently",
            # RecallTopK, HitRate, MRR, NDCG (no_feedback_users=True: empty_users="zero");
            # Novelty, PopularityBiasMetric's ARP (normalize_arp=False). Its PrecisionTopK,
            # FBetaTopK, MAP, ARP under normalize_arp=True, Personalization, Diversity and
            # Serendipity are defined otherwise (docs/beyond.md)
            frozenset({"recall", "hit_rate", "rr", "ndcg", "novelty", "popularity"}),
            {
                "rank_gaps": "keep",  # a rank prediction is read as given: rank <= k
                "cold_items": "skip",  # Novelty and ARP drop the items absent from the training data
            },
        ),
    )
}


def resolve(profile: Any, explicit: dict[str, Any], metrics: Any) -> tuple[dict[str, Any], Any]:
    """The convention options and metrics of one call: the profile's, with explicit ones on top.

    ``explicit`` maps option name -> value or None (not given). Returns (options, metrics):
    options also holds ``per_metric``, the profile's per-metric options that no explicit option
    overrides, and ``no_cutoff``, the metrics the peer has without a cut-off only; metrics
    stays None (all) for the recframe profile, else defaults to the peer's.
    """
    if not isinstance(profile, str) or profile not in PROFILES:
        known = ", ".join(f'"{p}"' for p in PROFILES)
        raise RecframeError(f"{ref('profile', profile)} is not a known profile. Hint: choose one of {known}.")
    chosen = PROFILES[profile]
    given = {name: value for name, value in explicit.items() if value is not None}
    options = {**chosen.options, **given}
    options["per_metric"] = {m: {o: val for o, val in opts.items() if o not in given} for m, opts in chosen.per_metric.items()}
    options["no_cutoff"] = tuple(sorted(chosen.no_cutoff))
    if metrics is None:
        # the default: every metric the peer has among recframe's defaults (per user, no side input)
        return options, None if chosen.metrics is None else [m for m in default_metrics() if m in chosen.metrics]
    if not isinstance(metrics, (str, Iterable)):
        return options, metrics  # not a metric selection at all: check_arguments says so
    names: list[Any] = [metrics] if isinstance(metrics, str) else list(metrics)
    missing = [m for m in names if m in REGISTRY and not has_metric(chosen, m)]
    if missing:
        has = ", ".join(m for m in REGISTRY if has_metric(chosen, m))
        raise RecframeError(
            f"{ref('profile', profile)}: {chosen.peer} has no {', '.join(map(repr, missing))} metric, so the "
            f"profile cannot reproduce it. Hint: ask for metrics it has ({has}), or use {fix('profile', 'recframe')}."
        )
    return options, metrics
