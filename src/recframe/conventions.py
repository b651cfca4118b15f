"""The evaluation conventions recframe exposes as named options, with their defaults.

Every choice that makes two ranking-metric libraries disagree is an option here, so a user can
see it, name it in a report and change it. The formulas are in the docstring of
:func:`recframe.per_user`; ``docs/conventions.md`` compares them with other libraries, and
:mod:`recframe.profiles` bundles them to reproduce one.

>>> from recframe.conventions import DEFAULTS
>>> DEFAULTS["discount"], DEFAULTS["rr_cutoff"]
('log2_rank_plus_1', True)
"""

from __future__ import annotations

from typing import Any, Literal, get_args

PrecisionDenominator = Literal["k", "retrieved", "min_k_relevant"]
RecallDenominator = Literal["relevant", "min_k_relevant"]
APDenominator = Literal["min_k_relevant", "relevant", "hits", "k"]
Gain = Literal["linear", "binary", "exp2"]
EmptyUsers = Literal["skip", "zero", "error"]
IDCG = Literal["relevant", "k"]
Discount = Literal["log2_rank_plus_1", "log2_max_rank_2"]
Ties = Literal["item_asc", "item_desc"]
ScoreDtype = Literal["float64", "float32"]
UnrankedUsers = Literal["zero", "skip"]
RankGaps = Literal["error", "keep", "rerank"]

#: option name -> the values it accepts (the first one is the default).
CHOICES: dict[str, tuple[Any, ...]] = {
    "precision_denominator": get_args(PrecisionDenominator),
    "recall_denominator": get_args(RecallDenominator),
    "ap_denominator": get_args(APDenominator),
    "gain": get_args(Gain),
    "idcg": get_args(IDCG),
    "discount": get_args(Discount),
    "rr_cutoff": (True, False),
    "ties": get_args(Ties),
    "score_dtype": get_args(ScoreDtype),
    "empty_users": get_args(EmptyUsers),
    "unranked_users": get_args(UnrankedUsers),
    "rank_gaps": get_args(RankGaps),
}

DEFAULTS: dict[str, Any] = {name: values[0] for name, values in CHOICES.items()}
