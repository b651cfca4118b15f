"""``summary(..., ci=..., ci_method="poisson")``: the Poisson bootstrap, inside the engine.

Each resample gives every counted user a weight drawn from Poisson(1) instead of drawing
``n_users`` users with replacement (the multinomial bootstrap of :func:`recframe.stats.bootstrap_ci`):
a resample's mean is ``sum_i w_i x_i / sum_i w_i [x_i not null]``. The weights are not drawn by a
random generator held in Python but computed, in the engine, from the seed, the resample's
number ``b`` and the user's number ``u``, in integer arithmetic that is exact on every engine:
the same seed gives the same weights, so the same intervals, on Polars, pandas, DuckDB, Spark,
SQLFrame and Ibis, and nothing is shuffled. One query computes them: the table of counted users
(one row per list) crossed with the resample numbers ``0 .. n_resamples - 1``, summed per
(group, resample); the intervals are the percentiles of those means, taken in the engine by
numpy's rule (``np.nanquantile``, linear), so only one row per group leaves it.

The generator, in full (:func:`weight` is the same in Python, for the tests):

- ``P = 2**31 - 1`` (a prime) and ``mix(x, key) = ((x + key) mod P) ** 5 mod P``, a bijection of
  ``0 .. P - 1`` (5 does not divide P - 1), computed as three products of numbers below 2**31:
  no intermediate reaches 2**62, so no engine's int64 can overflow.
- the seed (an int >= 0; None draws one, a numpy Generator gives one) is split into base-P
  digits, each added in and mixed by two rounds: a state ``s`` (in Python), which gives the
  resamples' keys ``k1 = K2 + s`` and ``k2 = K3 + mix(s, K1)``. Each resample
  ``y_b = mix(mix(b, k1), k2)`` (b rows, made once); each user ``z_u = mix(u, K4)``, ``u`` the
  user's dense rank among the counted users of the call (1, 2, ...: integer ids in numeric
  order, strings in byte order on every engine tested); each (user, resample)
  ``x = mix(mix(y_b + z_u, K5), K6)``. Two rounds of degree 5 on a sum of two mixed counters:
  the weights' mean, variance, frequencies and the correlation of neighbouring users,
  resamples and seeds are those of independent Poisson(1) draws (tests/test_poisson_bootstrap.py).
- the weight is the Poisson(1) inverse CDF at ``(x + 1/2) / P``: the number of thresholds
  ``T_k = floor(P F(k) - 1/2) + 1`` (``F`` the Poisson(1) CDF, k = 0..11) that ``x`` reaches.
  The chain stops at 12 exactly: ``P (1 - F(12)) = 0.14 < 1/2``, so no ``x`` below P would
  reach ``T_12``, and a weight of 12 is the whole tail ``P(w >= 12) = 8.3e-10``.

A user has the same weight in every ``by`` group of one resample (the groups' resamples are
paired). A resample in which every counted user of a group draws 0 (probability ``e**-n`` for n
users: 14% for 2, 0.7% for 5, 5e-5 for 10) has no mean and is left out of the percentiles, as
:func:`recframe.stats.bootstrap_ci` leaves out a resample with no value of the column; a group
with fewer than two values has no interval, as there.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from decimal import Decimal, localcontext
from typing import Any

import narwhals as nw
import numpy as np

from recframe import _names as n
from recframe.engine import _frames
from recframe.errors import RecframeError, fix
from recframe.statistics import _intervals

#: the modulus of the generator, a prime below 2**31: products of two residues stay below 2**62
P = 2**31 - 1
#: the round keys: the fractional parts of the square roots of the first seven primes, times
#: 2**31 (as SHA-256 takes its constants): arbitrary, fixed, below P
KEYS = (889516851, 1572067138, 506952121, 1386740381, 679946559, 1300411462, 264367317)
#: the largest weight: the chain of thresholds below is the exact inverse CDF on the grid of x
CAP = 12


def _thresholds() -> tuple[int, ...]:
    """``T_k = floor(P F(k) - 1/2) + 1`` for k = 0..CAP-1, F the Poisson(1) CDF (50 digits)."""
    with localcontext() as context:
        context.prec = 50
        e = Decimal(-1).exp()
        cdf, term, out = Decimal(0), e, []
        for k in range(CAP + 1):
            term = e if k == 0 else term / k
            cdf += term
            out.append(math.floor(P * cdf - Decimal("0.5")) + 1)
    assert out[CAP] >= P, "the last bucket is not the whole tail"  # no x < P reaches T_CAP
    return tuple(out[:CAP])


#: x at or above T_k draws a weight above k
THRESHOLDS = _thresholds()

# working columns
_X = "__rf_px"
RESAMPLE, _Y, _Z, _W = "__rf_resample", "__rf_py", "__rf_pz", "__rf_pw"


def mix(x: int, key: int) -> int:
    """One round of the generator in Python: ``((x + key) mod P) ** 5 mod P``.

    >>> mix(0, 2), mix(P - 2, 2)
    (32, 0)
    """
    return pow((x + key) % P, 5, P)


def seed_keys(seed: int) -> tuple[int, int]:
    """The two round keys of the resamples that the seed gives: its base-P digits (least
    significant first, at least one) each added in and mixed by two rounds, then the
    resample keys ``K2 + s`` and ``K3 + mix(s, K1)`` (mod P)."""
    state, digits = 0, []
    while True:
        seed, digit = divmod(seed, P)
        digits.append(digit)
        if not seed:
            break
    for digit in digits:
        state = mix(mix(state + digit, KEYS[0]), KEYS[1])
    return (KEYS[2] + state) % P, (KEYS[3] + mix(state, KEYS[1])) % P


def weight(keys: tuple[int, int], resample: int, user: int) -> int:
    """The Poisson(1) weight of user number `user` (1, 2, ...) in resample `resample` (0, 1,
    ...), `keys` being :func:`seed_keys` of the seed: what the engine computes, in Python."""
    y = mix(mix(resample, keys[0]), keys[1])
    z = mix(user, KEYS[4])
    x = mix(mix(y + z, KEYS[5]), KEYS[6])
    return sum(x >= t for t in THRESHOLDS)


def seed_of(seed: Any) -> int:
    """The integer seed of a checked ``seed=``: None draws one (a fresh interval each call, as the
    multinomial bootstrap's), a numpy Generator gives one from its stream."""
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63 - 1))
    if seed is None:
        return int(np.random.default_rng().integers(0, 2**63 - 1))
    return int(seed)


def _mixed(frame: nw.LazyFrame, column: str, start: nw.Expr, *keys: int) -> nw.LazyFrame:
    """`frame` with `column` = ``mix(... mix(start, keys[0]) ..., keys[-1])`` (`start` an int64
    expression, 0 <= start < 3P), two projections a round: SQLFrame copies its whole plan at
    each step, so the steps are few. Leaves a working column ``<column>:t``."""
    # every literal an int64: an engine may type a small one int32, and Ibis adds the modulus
    # back to a remainder (floor semantics) in the remainder's type
    work = f"{column}:t"
    t, m = nw.col(work), nw.lit(P, dtype=nw.Int64)
    for key in keys:
        frame = frame.with_columns(((start + nw.lit(key, dtype=nw.Int64)) % m).alias(work))
        frame = frame.with_columns(((((t * t) % m) * ((t * t) % m)) % m * t % m).alias(column))
        start = nw.col(column)
    return frame


def _weight_expr() -> nw.Expr:
    """The weight of the row's x: the number of thresholds it reaches (a CASE chain, 0..CAP)."""
    expr: nw.Expr = nw.lit(CAP, dtype=nw.Int64)
    for k in reversed(range(CAP)):
        expr = nw.when(nw.col(_X) < nw.lit(THRESHOLDS[k], dtype=nw.Int64)).then(nw.lit(k, dtype=nw.Int64)).otherwise(expr)
    return expr


def resample_numbers(one_row: nw.LazyFrame, n_resamples: int, keys: tuple[int, int]) -> nw.LazyFrame:
    """The resamples ``0 .. n_resamples - 1`` and their ``y_b``, made inside the engine of
    `one_row` (one row, an integer column ``__rf_one``): :func:`recframe.engine._frames.numbers_below`
    (int64 on every engine, which mix() needs not to overflow)."""
    return _mixed(_frames.numbers_below(one_row, n_resamples, RESAMPLE), _Y, nw.col(RESAMPLE), *keys)


def resample_means(
    users: nw.LazyFrame, one_row: nw.LazyFrame, metric_cols: list[str], n_resamples: int, keys: tuple[int, int]
) -> nw.LazyFrame:
    """One row per (group, resample): the weighted mean of each metric column of `users` (its
    group keys, the user, then the counted values, null where a user does not count), null
    where no counted user drew a weight."""
    grouped = [c for c in users.columns if c != n.USER and c not in metric_cols]
    anyone = functools.reduce(lambda a, b: a | b, (~nw.col(c).is_null() for c in metric_cols))
    numbered = users.filter(anyone).with_columns(nw.col(n.USER).rank("dense").cast(nw.Int64).alias(_Z))
    numbered = _mixed(numbered, _Z, nw.col(_Z), KEYS[4])
    pairs = numbered.join(resample_numbers(one_row, n_resamples, keys), how="cross")
    pairs = _mixed(pairs, _X, nw.col(_Y) + nw.col(_Z), KEYS[5], KEYS[6])
    pairs = pairs.with_columns(_weight_expr().cast(nw.Float64).alias(_W))
    terms = pairs.select(
        *grouped,
        RESAMPLE,
        *((nw.col(_W) * nw.col(c)).alias(f"__rf_num:{c}") for c in metric_cols),
        *(nw.when(nw.col(c).is_null()).then(0.0).otherwise(nw.col(_W)).alias(f"__rf_den:{c}") for c in metric_cols),
    )
    sums = _frames.group_agg(
        terms,
        [*grouped, RESAMPLE],
        *(nw.col(f"__rf_{part}:{c}").sum() for c in metric_cols for part in ("num", "den")),
    )
    # a null divisor where no weight fell (no engine divides by zero: Spark's ANSI mode raises)
    return sums.select(
        *grouped,
        RESAMPLE,
        *(
            (nw.col(f"__rf_num:{c}") / nw.when(nw.col(f"__rf_den:{c}") > 0).then(nw.col(f"__rf_den:{c}"))).alias(c)
            for c in metric_cols
        ),
    )


def percentiles(means: nw.LazyFrame, grouped: list[str], metric_cols: list[str], level: float) -> nw.LazyFrame:
    """Per group, each metric's ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of its
    non-null resample means (``c_lo``, ``c_hi``), by numpy's rule: the virtual index
    ``h = (n - 1) q``, the values of sorted positions floor(h) and floor(h) + 1 interpolated by
    numpy's ``_lerp`` (from the upper value when the fraction is 1/2 or more)."""
    bounds = {"lo": (1 - level) / 2, "hi": (1 + level) / 2}  # as stats.bootstrap_ci writes them
    ranked = means.with_columns(
        *(nw.col(c).rank("ordinal").over(*grouped).cast(nw.Float64).alias(f"__rf_r:{c}") for c in metric_cols),
        *((nw.col(c).count().over(*grouped).cast(nw.Float64) - 1).alias(f"__rf_n:{c}") for c in metric_cols),
    )
    parts = []
    for c in metric_cols:
        r = nw.col(f"__rf_r:{c}")
        for side, q in bounds.items():
            h = nw.col(f"__rf_n:{c}") * q
            lower, upper = (r - 1 <= h) & (h < r), (r - 2 <= h) & (h < r - 1)
            parts += [
                nw.when(lower).then(nw.col(c)).alias(f"__rf_a:{c}:{side}"),
                nw.when(upper).then(nw.col(c)).alias(f"__rf_b:{c}:{side}"),
                nw.when(lower).then(h - (r - 1)).alias(f"__rf_t:{c}:{side}"),
            ]
    picked = ranked.select(*grouped, *parts)
    names = [f"__rf_{x}:{c}:{side}" for c in metric_cols for side in bounds for x in "abt"]
    agg = _frames.group_agg(picked, grouped, *(nw.col(name).max() for name in names))

    def lerp(c: str, side: str) -> nw.Expr:
        a, t = nw.col(f"__rf_a:{c}:{side}"), nw.col(f"__rf_t:{c}:{side}")
        b = nw.col(f"__rf_b:{c}:{side}").fill_null(a)  # no upper value: h is the last position
        return nw.when(t >= 0.5).then(b - (b - a) * (1 - t)).otherwise(a + (b - a) * t).alias(f"{c}_{side}")

    return agg.select(*grouped, *(lerp(c, side) for c in metric_cols for side in bounds))


def refuse_huge(users: nw.LazyFrame, metric_cols: list[str], on_polars: bool) -> nw.LazyFrame:
    """`users`, refused where a value is past :data:`recframe.statistics._intervals.ENGINE_VALUE_LIMIT`: on Polars when it is collected (a
    LazyFrame stays lazy), on a SQL engine now (one row read back)."""

    def inspect(largest: Callable[[str], Any]) -> None:
        for c in metric_cols:
            value = largest(c)
            if value is not None and not value <= _intervals.ENGINE_VALUE_LIMIT:
                raise RecframeError(
                    f"column {c!r} has per-user values up to {value:.3g}, past what {fix('ci_method', 'poisson')} sums "
                    f"exactly in an engine (1e150). Hint: pass {fix('ci_method', 'bootstrap')} on a Polars frame, which "
                    "scales such values."
                )

    aggs = [nw.col(c).abs().max().alias(f"__rf_max:{c}") for c in metric_cols]
    if on_polars:

        def check(table: nw.DataFrame) -> None:
            small = table.select(aggs)
            inspect(lambda c: small.item(0, f"__rf_max:{c}") if len(small) else None)

        return _frames.when_collected(users, check)
    small = users.select(aggs).collect("polars").to_native()
    inspect(lambda c: small.item(0, f"__rf_max:{c}") if small.height else None)
    return users
