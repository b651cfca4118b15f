"""A slow, obvious reference for recframe.off_policy's single-slot estimators: plain Python loops
over the logged rows, each estimator written from its textbook formula (Open Bandit Pipeline's
definitions), its standard error from the per-row values (the mean estimators) or the delta
method's influence values (SNIPS, SNDR) computed row by row."""

from __future__ import annotations

import math
from statistics import NormalDist


def _mean(values: list[float]) -> float:
    total = 0.0
    for x in values:
        total += x
    return total / len(values)


def _se_of_mean(values: list[float]) -> float | None:
    n = len(values)
    if n < 2:
        return None
    m = _mean(values)
    squares = 0.0
    for x in values:
        squares += (x - m) ** 2
    return math.sqrt(squares / (n - 1) / n)


def _self_normalized(w: list[float], r: list[float], q: list[float], qe: list[float]) -> tuple[float | None, float | None]:
    """mean(qe) + sum w (r - q) / sum w; SNIPS is q = qe = 0. Its influence per row:
    qe - mean(qe) + w (d - D) / mean(w)."""
    n = len(w)
    sw = sum(w)
    if sw <= 0:
        return None, None
    d = [r[i] - q[i] for i in range(n)]
    big_d = sum(w[i] * d[i] for i in range(n)) / sw
    m = _mean(qe)
    wbar = sw / n
    psi = [qe[i] - m + w[i] * (d[i] - big_d) / wbar for i in range(n)]
    if n < 2:
        return m + big_d, None
    squares = 0.0
    for x in psi:
        squares += x * x
    return m + big_d, math.sqrt(squares / (n * (n - 1)))


def estimate(
    estimator: str,
    w: list[float],
    r: list[float],
    q: list[float] | None = None,
    qe: list[float] | None = None,
    max_weight: float | None = None,
    switch_threshold: float | None = None,
    ci: float = 0.95,
) -> dict[str, float | None]:
    """value, se, lo, hi of one estimator on one group's rows (weights w = pi_e / p)."""
    n = len(w)
    q = q if q is not None else [0.0] * n
    qe = qe if qe is not None else [0.0] * n
    if estimator in ("snips", "sndr"):
        zeros = [0.0] * n
        value, se = _self_normalized(w, r, zeros, zeros) if estimator == "snips" else _self_normalized(w, r, q, qe)
    else:
        per_row = []
        for i in range(n):
            if estimator == "ips":
                per_row.append(w[i] * r[i])
            elif estimator == "clipped_ips":
                per_row.append(min(w[i], max_weight) * r[i])
            elif estimator == "dm":
                per_row.append(qe[i])
            elif estimator == "dr":
                per_row.append(qe[i] + w[i] * (r[i] - q[i]))
            elif estimator == "switch_dr":
                per_row.append(qe[i] + (w[i] if w[i] <= switch_threshold else 0.0) * (r[i] - q[i]))
            else:
                raise ValueError(estimator)
        value, se = _mean(per_row), _se_of_mean(per_row)
    z = NormalDist().inv_cdf((1 + ci) / 2)
    lo = None if value is None or se is None else value - z * se
    hi = None if value is None or se is None else value + z * se
    return {"value": value, "se": se, "lo": lo, "hi": hi}


def diagnostics(w: list[float], r: list[float]) -> dict[str, float]:
    """on_policy (mean reward), ess, largest_weight, supported (share of w > 0)."""
    sw, sw2 = sum(w), sum(x * x for x in w)
    return {
        "on_policy": _mean(r),
        "ess": sw * sw / sw2 if sw2 > 0 else 0.0,
        "largest_weight": max(w),
        "supported": sum(1 for x in w if x > 0) / len(w),
    }


def slate_estimate(estimator: str, slates: list[list[tuple[float, float]]], ci: float = 0.95) -> dict[str, float | None]:
    """value, se, lo, hi of a slate estimator: each slate a list of (w_k, r_k) in position order;
    the slate's value is sum_k weight_k r_k with weight_k the product of all its w (sips), w_k
    alone (iips) or the product of w_1 .. w_k (rips); the estimate is their mean over slates."""
    values = []
    for slate in slates:
        total, prefix, whole = 0.0, 1.0, 1.0
        for w, _ in slate:
            whole *= w
        for w, r in slate:
            prefix *= w
            weight = {"sips": whole, "iips": w, "rips": prefix}[estimator]
            total += weight * r
        values.append(total)
    value, se = _mean(values), _se_of_mean(values)
    z = NormalDist().inv_cdf((1 + ci) / 2)
    return {"value": value, "se": se, "lo": None if se is None else value - z * se, "hi": None if se is None else value + z * se}


def click_metrics(
    contexts: dict[object, list[tuple[int, float, int | None]]], propensity: dict[int, float], metric: str, k: int
) -> dict[str, float | None]:
    """value, se, n and on_policy of a click metric at k: each context a list of its logged rows
    (logged position, click, the new ranking's rank or None). A click counts c / p_position;
    DCG and precision average over every context (0 without a click), recall over the contexts
    with a click. on_policy: the same with the logged position as the rank."""

    def one(rows: list[tuple[int, float, int | None]], own: bool) -> float | None:
        hit, dcg, total = 0.0, 0.0, 0.0
        for position, click, rank in rows:
            if click <= 0:
                continue
            gain = click / propensity[position]
            total += gain
            r = position if own else rank
            if r is not None and r <= k:
                hit += gain
                dcg += gain / math.log2(1 + r)
        if metric == "click_dcg":
            return dcg
        if metric == "click_precision":
            return hit / k
        return hit / total if total > 0 else None

    values = [x for x in (one(rows, False) for rows in contexts.values()) if x is not None]
    own = [x for x in (one(rows, True) for rows in contexts.values()) if x is not None]
    if not values:
        return {"value": None, "se": None, "n": 0, "on_policy": None}
    return {"value": _mean(values), "se": _se_of_mean(values), "n": len(values), "on_policy": _mean(own)}
