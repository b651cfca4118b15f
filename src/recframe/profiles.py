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
['lenskit', 'ranx', 'recframe', 'recommenders', 'rectools', 'replay', 'trec_eval']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from recframe.conventions import DEFAULTS
from recframe.errors import RecframeError
from recframe.metrics import REGISTRY


@dataclass(frozen=True)
class Profile:
    """One peer library's conventions and the metrics it has."""

    name: str
    #: the peer, as installed from PyPI
    peer: str
    #: metric names (as in recframe) the peer computes
    metrics: frozenset[str]
    #: convention option -> value; options not named keep recframe's default
    overrides: dict[str, Any] = field(default_factory=dict)
    #: True when tests/peers/golden holds the peer's own numbers for this profile
    golden: bool = True

    @property
    def options(self) -> dict[str, Any]:
        """Every convention option, with this profile's values."""
        return {**DEFAULTS, **self.overrides}


ALL_METRICS = frozenset(REGISTRY)

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("recframe", "recframe", ALL_METRICS),
        Profile(
            "trec_eval",
            "pytrec-eval-terrier (trec_eval 9.0)",
            # P, recall, success, Rprec, map_cut, recip_rank, ndcg_cut
            frozenset({"precision", "recall", "hit_rate", "r_precision", "ap", "rr", "ndcg"}),
            {
                "ap_denominator": "relevant",
                "rr_cutoff": False,
                "ties": "item_desc",
                "score_dtype": "float32",
                "empty_users": "zero",
                "unranked_users": "skip",
            },
        ),
        Profile(
            "ranx",
            "ranx",
            frozenset({"precision", "recall", "f1", "hit_rate", "r_precision", "ap", "rr", "dcg", "ndcg"}),
            {"ap_denominator": "relevant", "empty_users": "zero"},
        ),
        Profile(
            "rectools",
            "rectools",
            # Precision, Recall, F1Beta, HitRate, MAP, MRR, NDCG
            frozenset({"precision", "recall", "f1", "hit_rate", "ap", "rr", "ndcg"}),
            {"ap_denominator": "relevant", "gain": "binary", "idcg": "k"},
        ),
        Profile(
            "replay",
            "replay-rec",
            frozenset({"precision", "recall", "hit_rate", "ap", "rr", "ndcg"}),
            {"gain": "binary", "ties": "item_desc"},
        ),
        # not golden-verified: from the peer's source (recommenders 1.2.1 python_evaluation:
        # common users only, binary relevance, map_at_k / min(k, R); its pandas sort breaks
        # score ties in no documented order)
        Profile(
            "recommenders",
            "recommenders",
            frozenset({"precision", "recall", "ap", "ndcg"}),
            {"gain": "binary", "unranked_users": "skip"},
            golden=False,
        ),
        # not golden-verified: LensKit 2025 needs torch, whose PyPI wheels pull CUDA libraries
        # too large for this project's CI; from its documentation (nDCG discount log2(max(rank, 2)))
        Profile(
            "lenskit",
            "lenskit",
            frozenset({"precision", "recall", "hit_rate", "rr", "ndcg"}),
            {"gain": "binary", "discount": "log2_max_rank_2"},
            golden=False,
        ),
    )
}


def resolve(profile: Any, explicit: dict[str, Any], metrics: Any) -> tuple[dict[str, Any], Any]:
    """The convention options and metrics of one call: the profile's, with explicit ones on top.

    ``explicit`` maps option name -> value or None (not given). Returns (options, metrics);
    metrics stays None (all) for the recframe profile, else defaults to the peer's.
    """
    if not isinstance(profile, str) or profile not in PROFILES:
        names = ", ".join(f'"{p}"' for p in PROFILES)
        raise RecframeError(f"profile={profile!r} is not a known profile. Hint: choose one of {names}.")
    chosen = PROFILES[profile]
    options = {**chosen.options, **{name: value for name, value in explicit.items() if value is not None}}
    if metrics is None:
        return options, None if chosen.metrics == ALL_METRICS else [m for m in REGISTRY if m in chosen.metrics]
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    missing = [m for m in names if m in REGISTRY and m not in chosen.metrics]
    if missing:
        has = ", ".join(m for m in REGISTRY if m in chosen.metrics)
        raise RecframeError(
            f"profile={profile!r}: {chosen.peer} has no {', '.join(map(repr, missing))} metric, so the profile "
            f"cannot reproduce it. Hint: ask for metrics it has ({has}), or use profile=\"recframe\"."
        )
    return options, metrics
