"""The evaluation conventions recframe exposes as named options, with their defaults.

Every choice that makes two ranking-metric libraries disagree is an option here, so a user can
see it, name it in a report and change it. The formulas are in the docstring of
:func:`recframe.per_user`.
"""

from __future__ import annotations

from typing import Literal, get_args

PrecisionDenominator = Literal["k", "retrieved"]
APDenominator = Literal["min_k_relevant", "relevant", "hits", "k"]
Gain = Literal["linear", "binary", "exp2"]
EmptyUsers = Literal["skip", "zero", "error"]

#: option name -> the values it accepts (the first one is the default).
CHOICES: dict[str, tuple[str, ...]] = {
    "precision_denominator": get_args(PrecisionDenominator),
    "ap_denominator": get_args(APDenominator),
    "gain": get_args(Gain),
    "empty_users": get_args(EmptyUsers),
}

DEFAULTS: dict[str, str] = {name: values[0] for name, values in CHOICES.items()}
