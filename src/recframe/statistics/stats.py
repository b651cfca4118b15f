"""Statistics on arrays of per-user values: intervals, paired tests, multiple-testing corrections.

Plain numpy functions; :func:`recframe.summary` (``ci=``) and :func:`recframe.compare` apply
them to frames. Missing values are NaN and are left out (per column for 2-D input).

The bootstrap and the randomization test need only numpy. The t interval and the paired t
test need the t distribution from scipy (``pip install "recframe[stats]"``); the Wilcoxon
test computes its own exact and normal p-values.

>>> import numpy as np
>>> from recframe import stats
>>> stats.adjust_pvalues(np.array([0.01, 0.04, 0.03]), "holm").tolist()
[0.03, 0.06, 0.06]
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, TypeVar

import numpy as np

from recframe import _docs
from recframe.engine._validate import whole, whole_at_least
from recframe.errors import RecframeError, fix, ref
from recframe.options import (  # noqa: F401  (declared with the options: recframe.stats names them too)
    ALPHA,
    CI_METHODS,
    CORRECTION,
    CORRECTIONS,
    INTERVAL_RESAMPLES,
    PAIRED_TEST,
    TEST_RESAMPLES,
    TESTS,
    UNPAIRED_TEST,
    UNPAIRED_TESTS,
    CIMethod,
    Correction,
    Test,
    UnpairedTest,
)

_F = TypeVar("_F", bound=Callable[..., Any])


def with_defaults(function: _F) -> _F:
    """Write the defaults above into `function`'s docstring, where it names one in braces
    (``{ALPHA}``, ``{CORRECTION}``, ``{PAIRED_TEST}``, ``{TEST_RESAMPLES}``, ...): the docs
    cannot drift from the values."""
    return _docs.filled(
        ALPHA=ALPHA,
        CORRECTION=f'"{CORRECTION}"',
        PAIRED_TEST=f'"{PAIRED_TEST}"',
        UNPAIRED_TEST=f'"{UNPAIRED_TEST}"',
        INTERVAL_RESAMPLES=INTERVAL_RESAMPLES,
        TEST_RESAMPLES=TEST_RESAMPLES,
    )(function)


#: Upper bound on the entries of one resampling matrix (resamples x users): memory stays
#: around 8 bytes x this many per chunk, whatever n_resamples and the number of users.
CHUNK_ELEMENTS = 1 << 22

#: The most resamples a call may ask for. A bootstrap keeps its resample means (8 bytes x this
#: many per metric column) for their quantiles and draws this many x users indices; 10**12
#: would ask for terabytes. Intervals and p-values stop moving long before (1e-3 resolution at
#: 10**4), so a count past this is a mistake, refused rather than left to run out of memory.
MAX_RESAMPLES = 1_000_000

#: Below this many non-zero differences without ties, the Wilcoxon p-value is exact.
WILCOXON_EXACT_MAX = 50


class TestResult(NamedTuple):
    """A test statistic and its two-sided p-value."""

    statistic: float
    p_value: float


def _scipy_special() -> Any:
    try:
        import scipy.special
    except ImportError:  # pragma: no cover - depends on the environment
        raise RecframeError(
            'the t distribution (ci_method="t", test="paired_t") needs scipy, which is not '
            'installed. Hint: pip install "recframe[stats]", or use ci_method="bootstrap" / '
            'test="randomization", which need only numpy.'
        ) from None
    return scipy.special


def _t_quantile(df: Any, p: float) -> Any:
    """The t distribution's quantile at `p` with `df` degrees of freedom (arrays broadcast).

    scipy before 1.17 inverts the t distribution to about 1e-11 (``stdtrit(2, 0.975)`` is
    4.302652729696142; the closed form 0.95 / sqrt(2 * 0.975 * 0.025) is 4.302652729749462):
    there one Newton step on its distribution function, which is right to the last digits,
    restores them. From 1.17 on, ``stdtrit`` is taken as it is.
    """
    special = _scipy_special()
    q = special.stdtrit(df, p)
    if _scipy_older_than_1_17():
        density = np.exp(
            special.gammaln((df + 1) / 2)
            - special.gammaln(df / 2)
            - 0.5 * np.log(df * np.pi)
            - (df + 1) / 2 * np.log1p(q * q / df)
        )
        q = q - (special.stdtr(df, q) - p) / density
    return q


@functools.cache
def _scipy_older_than_1_17() -> bool:
    import scipy

    return tuple(int(part) for part in re.findall(r"\d+", scipy.__version__)[:2]) < (1, 17)


def check_level(name: str, value: Any) -> float:
    """Return ``value`` as a float strictly between 0 and 1, or raise naming ``name``.

    >>> check_level("ci", 0.95)
    0.95
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise RecframeError(
            f"{ref(name, value)} is not a probability strictly between 0 and 1. "
            f"Hint: pass {fix(name, 0.95 if name == 'ci' else 0.05)}."
        )
    return float(value)


def check_choice(name: str, value: Any, choices: tuple[Any, ...]) -> Any:
    """Return ``value`` if it is one of ``choices``, or raise naming ``name`` and the choices.

    >>> check_choice("test", "wilcoxon", TESTS)
    'wilcoxon'
    """
    if value not in choices:
        raise RecframeError(f"{ref(name, value)} is not one of {list(choices)}. Hint: pass {ref(name, choices[0])}.")
    return value


def check_resampling(n_resamples: Any, seed: Any) -> tuple[int, np.random.Generator]:
    """Check ``n_resamples`` (an int from 1 to :data:`MAX_RESAMPLES`) and ``seed`` (None, a
    numpy Generator or an int >= 0, as numpy takes it); return it and a numpy Generator.

    >>> n, rng = check_resampling(100, 0)
    >>> n, type(rng).__name__
    (100, 'Generator')
    """
    n_resamples = whole_at_least("n_resamples", n_resamples, 1, "is not a positive integer.", f"pass {fix('n_resamples', 1000)}.")
    if n_resamples > MAX_RESAMPLES:
        raise RecframeError(
            f"{ref('n_resamples', n_resamples)} is more than the {MAX_RESAMPLES:,} resamples recframe draws: the "
            "resample means alone would not fit in memory, and intervals and p-values stop moving long before. "
            f"Hint: pass e.g. {fix('n_resamples', 10_000)}."
        )
    is_int = whole(seed) is not None
    if (seed is not None and not is_int and not isinstance(seed, np.random.Generator)) or (is_int and seed < 0):
        raise RecframeError(
            f"{ref('seed', seed)} is not an integer >= 0, a numpy Generator or None. "
            f"Hint: pass {fix('seed', 0)} for results you can reproduce."
        )
    return int(n_resamples), np.random.default_rng(seed)


#: values beyond this make sums and squares of a few thousand of them overflow float64
_HUGE = 2.0**500


def overflow_scale(*arrays: np.ndarray) -> float:
    """A power of two to divide `arrays` by before their sums, squares and differences are
    taken, when their largest magnitude is so large that those could overflow (else 1.0).

    Dividing by a power of two is exact, so p-values and ratios are unchanged, and means,
    differences and interval bounds are the scaled ones times the scale.

    >>> overflow_scale(np.array([1e308, 0.5])) == 2.0**1023
    True
    >>> overflow_scale(np.array([3.0, -2.0]))
    1.0
    """
    big = max((float(np.nanmax(np.abs(a))) for a in arrays if a.size and not np.isnan(a).all()), default=0.0)
    return 1.0 if big < _HUGE else math.ldexp(1.0, math.frexp(big)[1] - 1)  # scaled values below 2 in magnitude


def mean(values: np.ndarray) -> float:
    """The mean of finite `values` (NaN for none), finite however close they come to the
    float64 maximum: a plain sum of 1e308 and 1e308 overflows, the mean of the two does not."""
    if not values.size:
        return math.nan
    scale = overflow_scale(values)
    return float((values / scale).mean() * scale)


def refuse_overflow(out: Any, keys: list[str], what: str) -> None:
    """Refuse a result (a Polars frame with ``metric`` and the `keys`) in which a difference or
    ratio of finite `what`, or an interval bound, went past the float64 maximum."""
    import polars as pl  # stats itself works on numpy arrays

    floats = [c for c, dtype in out.schema.items() if dtype == pl.Float64]
    bad = out.filter(pl.any_horizontal(pl.col(floats).is_infinite())) if floats else out.clear()
    if bad.height:
        row = bad.row(0, named=True)
        column = next(c for c in floats if row[c] is not None and math.isinf(row[c]))
        where = ", ".join(f"{k}={row[k]!r}" for k in keys)
        raise RecframeError(
            f"{column} of metric {row['metric']!r} ({where}) is beyond the largest float64 ({sys.float_info.max:.4g}): the "
            f"{what} are finite, but their {column} is not. Hint: rescale that metric column first, e.g. divide it by 1e10."
        )


def _columns(values: Any) -> tuple[np.ndarray, bool]:
    """values as a float (n, m) matrix, and whether the input was 1-D."""
    array = np.asarray(values, dtype=float)
    if array.ndim == 1:
        return array[:, None], True
    if array.ndim != 2:
        raise RecframeError(f"values has {array.ndim} dimensions; pass a 1-D or 2-D array. Hint: one column per metric.")
    return array, False


def _chunks(n_resamples: int, n: int) -> Iterator[int]:
    """Sizes of the resample chunks: at most CHUNK_ELEMENTS entries of (chunk x n) each."""
    size = max(1, CHUNK_ELEMENTS // max(n, 1))
    for start in range(0, n_resamples, size):
        yield min(size, n_resamples - start)


@with_defaults
def bootstrap_means(values: Any, n_resamples: int = INTERVAL_RESAMPLES, seed: Any = None) -> np.ndarray:
    """The means of ``n_resamples`` bootstrap resamples of the rows of ``values``.

    Parameters
    ----------
    values : array of shape (n,) or (n, m)
        One row per user; NaN marks a missing value, left out of that column's mean.
    n_resamples : int, default {INTERVAL_RESAMPLES}
        How many resamples of n rows, drawn with replacement.
    seed : int, numpy.random.Generator or None
        Seed of ``numpy.random.default_rng``: the same seed gives the same resamples.

    Returns
    -------
    numpy.ndarray of shape (n_resamples,) or (n_resamples, m)
        Resample means; NaN where a resample holds no non-missing value of a column.

    Notes
    -----
    One resample draws n row indices uniformly with replacement; the counts ``W[b, i]`` of how
    often row i was drawn make every resample's mean one matrix product, for all columns at
    once: ``mean[b, j] = sum_i W[b, i] x[i, j] / sum_i W[b, i] [x[i, j] not missing]``.
    Resamples are drawn in chunks of at most ``CHUNK_ELEMENTS`` indices, so memory does not
    grow with ``n_resamples``; there is no Python loop over users.

    Examples
    --------
    >>> import numpy as np
    >>> means = bootstrap_means(np.array([1.0, 2.0, 3.0]), n_resamples=5, seed=0)
    >>> means.shape, bool(((means >= 1) & (means <= 3)).all())
    ((5,), True)
    """
    n_resamples, rng = check_resampling(n_resamples, seed)
    matrix, flat = _columns(values)
    n, m = matrix.shape
    present = ~np.isnan(matrix)
    filled = np.where(present, matrix, 0.0)
    weights_of_present = present.astype(float)
    out = np.empty((n_resamples, m))
    start = 0
    for size in _chunks(n_resamples, n):
        if n == 0:
            out[start : start + size] = np.nan
            start += size
            continue
        drawn = rng.integers(0, n, size=(size, n))
        # counts[b, i] = how often row i was drawn in resample b: one bincount for the chunk
        offsets = (drawn + (np.arange(size) * n)[:, None]).ravel()
        counts = np.bincount(offsets, minlength=size * n).reshape(size, n).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + size] = (counts @ filled) / (counts @ weights_of_present)
        start += size
    return out[:, 0] if flat else out


@with_defaults
def bootstrap_ci(values: Any, ci: float = 0.95, n_resamples: int = INTERVAL_RESAMPLES, seed: Any = None) -> tuple[Any, Any]:
    """Percentile bootstrap interval of the mean, per column.

    Parameters
    ----------
    values : array of shape (n,) or (n, m)
        One row per user; NaN is missing and left out of that column.
    ci : float, default 0.95
        Coverage of the interval.
    n_resamples : int, default {INTERVAL_RESAMPLES}
        Bootstrap resamples.
    seed : int, numpy.random.Generator or None
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    (lo, hi)
        Floats for 1-D input, arrays of length m for 2-D input; NaN for a column with no value.

    Notes
    -----
    With resample means ``m_1..m_B`` (:func:`bootstrap_means`), the interval is their
    ``(1 - ci) / 2`` and ``(1 + ci) / 2`` quantiles (numpy's linear interpolation). A column
    with fewer than two values has no spread to resample: its interval is NaN, as the t
    interval's is.

    Examples
    --------
    >>> lo, hi = bootstrap_ci([1.0, 2.0, 3.0, 4.0], n_resamples=200, seed=1)
    >>> 1.0 <= lo < 2.5 < hi <= 4.0
    True
    >>> bootstrap_ci([5.0], seed=0)
    (nan, nan)
    """
    level = check_level("ci", ci)
    means = bootstrap_means(values, n_resamples, seed)
    matrix, flat = _columns(values)
    lo = np.full(matrix.shape[1], np.nan)
    hi = np.full(matrix.shape[1], np.nan)
    columns = means[:, None] if flat else means
    for j in np.flatnonzero((~np.isnan(matrix)).sum(axis=0) >= 2):  # a loop over metrics, not users
        lo[j], hi[j] = np.nanquantile(columns[:, j], [(1 - level) / 2, (1 + level) / 2])
    return (float(lo[0]), float(hi[0])) if flat else (lo, hi)


@with_defaults
def bootstrap_quantile_ci(
    values: Any, q: float, ci: float = 0.95, n_resamples: int = INTERVAL_RESAMPLES, seed: Any = None
) -> tuple[Any, Any]:
    """Percentile bootstrap interval of the `q` quantile (numpy's linear interpolation), per column.

    As :func:`bootstrap_ci` with the resample's quantile in place of its mean: each resample
    draws a column's n non-missing values with replacement, in chunks of at most
    :data:`CHUNK_ELEMENTS` draws, so memory does not grow with `n_resamples`.

    Parameters
    ----------
    values : array of shape (n,) or (n, m)
        One row per user; NaN is missing and left out of that column.
    q : float
        The quantile, from 0 to 1 (0.5: the median).
    ci : float, default 0.95
        Coverage of the interval.
    n_resamples : int, default {INTERVAL_RESAMPLES}
        Bootstrap resamples.
    seed : int, numpy.random.Generator or None
        Seed for ``numpy.random.default_rng``.

    Examples
    --------
    >>> lo, hi = bootstrap_quantile_ci([1.0, 2.0, 3.0, 4.0, 5.0], 0.5, n_resamples=200, seed=1)
    >>> 1.0 <= lo <= 3.0 <= hi <= 5.0
    True
    """
    level = check_level("ci", ci)
    n_resamples, rng = check_resampling(n_resamples, seed)
    matrix, flat = _columns(values)
    lo = np.full(matrix.shape[1], np.nan)
    hi = np.full(matrix.shape[1], np.nan)
    for j in range(matrix.shape[1]):  # a loop over metrics, not users
        column = matrix[:, j][~np.isnan(matrix[:, j])]
        if column.size < 2:
            continue
        quantiles = np.concatenate(
            [
                np.quantile(column[rng.integers(0, column.size, size=(size, column.size))], q, axis=1)
                for size in _chunks(n_resamples, column.size)
            ]
        )
        lo[j], hi[j] = np.quantile(quantiles, [(1 - level) / 2, (1 + level) / 2])
    return (float(lo[0]), float(hi[0])) if flat else (lo, hi)


def t_ci(values: Any, ci: float = 0.95) -> tuple[Any, Any]:
    """Student t interval of the mean, per column (needs scipy).

    Parameters
    ----------
    values : array of shape (n,) or (n, m)
        NaN is missing and left out of that column.
    ci : float, default 0.95
        Coverage of the interval.

    Returns
    -------
    (lo, hi)
        Floats for 1-D input, arrays for 2-D input; NaN for a column with fewer than 2 values.

    Notes
    -----
    ``mean -/+ t_{(1 + ci) / 2, n - 1} s / sqrt(n)`` with s the sample standard deviation
    (ddof=1) and t the quantile of Student's t with n - 1 degrees of freedom.

    Examples
    --------
    >>> lo, hi = t_ci([1.0, 2.0, 3.0])   # mean 2, s = 1, t_{0.975, 2} = 4.3027
    >>> round(lo, 4), round(hi, 4)
    (-0.4841, 4.4841)
    """
    level = check_level("ci", ci)
    matrix, flat = _columns(values)
    n = (~np.isnan(matrix)).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nanmean(matrix, axis=0) if matrix.shape[0] else np.full(matrix.shape[1], np.nan)
        half = std(matrix) / np.sqrt(n) * _t_quantile(np.maximum(n - 1, 1), (1 + level) / 2)
    half = np.where(n >= 2, half, np.nan)
    lo, hi = mean - half, mean + half
    return (float(lo[0]), float(hi[0])) if flat else (lo, hi)


def t_quantiles(sizes: list[int], ci: float) -> list[float]:
    """The two-sided t quantile of each sample size's n - 1 degrees of freedom at coverage `ci`
    (needs scipy), as :func:`t_ci` uses it.

    >>> [round(q, 4) for q in t_quantiles([3, 1000], 0.95)]
    [4.3027, 1.9623]
    """
    level = check_level("ci", ci)
    return [float(_t_quantile(max(size - 1, 1), (1 + level) / 2)) for size in sizes]


def std(values: Any) -> Any:
    """Sample standard deviation (ddof=1) per column, NaN left out; NaN with fewer than 2 values.

    >>> std([1.0, 2.0, 3.0, np.nan])
    1.0
    >>> std([1e200, 3e200])  # (squares past float64: the values are scaled first)
    1.414213562373095e+200
    """
    matrix, flat = _columns(values)
    n = (~np.isnan(matrix)).sum(axis=0)
    # a column of values past _SCALED_FROM, whose squares would overflow, is divided by a power
    # of two first (exact), and its deviation multiplied back; the others are left as they are
    largest = np.nanmax(np.abs(matrix), axis=0, initial=0.0)
    exponent = np.where(largest > _SCALED_FROM, np.frexp(largest)[1], 0)
    scaled = np.ldexp(matrix, -exponent)
    centred = scaled - np.where(n > 0, np.nansum(scaled, axis=0) / np.maximum(n, 1), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.ldexp(np.sqrt(np.nansum(centred**2, axis=0) / (n - 1)), exponent)
    out = np.where(n >= 2, out, np.nan)
    return float(out[0]) if flat else out


#: past this magnitude a value's square may overflow a float64 sum of squares (std scales it)
_SCALED_FROM = 1e150


def _differences(model: Any, baseline: Any) -> np.ndarray:
    x, y = np.asarray(model, dtype=float), np.asarray(baseline, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise RecframeError(
            f"paired samples must be 1-D arrays of the same length, got shapes {x.shape} and "
            f"{y.shape}. Hint: pair the values by user first."
        )
    if np.isnan(x).any() or np.isnan(y).any():
        raise RecframeError("paired samples contain NaN. Hint: drop the pairs with a missing value first.")
    return x - y


def paired_t_test(model: Any, baseline: Any) -> TestResult:
    """Two-sided paired t test of mean(model - baseline) = 0 (needs scipy).

    Parameters
    ----------
    model, baseline : 1-D arrays of the same length
        Paired values (one per user).

    Returns
    -------
    TestResult
        ``statistic`` t and two-sided ``p_value``.

    Notes
    -----
    With differences d_i (n pairs), ``t = mean(d) / (s_d / sqrt(n))``, s_d with ddof=1, and
    ``p = 2 P(T_{n-1} >= |t|)``. As scipy.stats.ttest_rel. Undefined cases: fewer than two
    pairs gives NaN; all differences equal to zero gives t = 0, p = 1 (no evidence of a
    difference; scipy gives NaN); all differences equal and non-zero gives t = +/-inf, p = 0.

    Examples
    --------
    >>> r = paired_t_test([2.0, 3.0, 5.0], [1.0, 1.0, 2.0])   # d = 1, 2, 3: t = 2 / (1 / sqrt(3))
    >>> round(r.statistic, 6) == round(2 / (1 / 3**0.5), 6), round(r.p_value, 4)
    (True, 0.0742)
    """
    d = _differences(model, baseline)
    n = d.size
    if n < 2:
        return TestResult(math.nan, math.nan)
    return paired_t_from_moments(n, float(d.mean()), float(std(d)))


def paired_t_from_moments(n: int, mean: float, s: float) -> TestResult:
    """:func:`paired_t_test` from the differences' count, mean and standard deviation (ddof=1),
    as an engine computes them, with the same undefined cases.

    >>> r = paired_t_from_moments(3, 2.0, 1.0)
    >>> round(r.p_value, 4)
    0.0742
    """
    if n < 2:
        return TestResult(math.nan, math.nan)
    if s == 0:
        return TestResult(0.0, 1.0) if mean == 0 else TestResult(math.copysign(math.inf, mean), 0.0)
    t = mean / (s / math.sqrt(n))
    p = 2 * float(_scipy_special().stdtr(n - 1, -abs(t)))
    return TestResult(t, min(p, 1.0))


def _average_ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranks 1..n with ties given their average rank, and the size of every tie group."""
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    sizes = np.diff(np.r_[starts, values.size])
    average = starts + (sizes + 1) / 2  # mean of ranks start+1 .. start+size
    ranks = np.empty(values.size)
    ranks[order] = np.repeat(average, sizes)
    return ranks, sizes


def _signed_rank_distribution(n: int) -> np.ndarray:
    """Counts of subsets of {1..n} by their sum (0..n(n+1)/2): the exact null of W+."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1
    for r in range(1, n + 1):  # a loop over ranks (n <= WILCOXON_EXACT_MAX), not users
        counts[r:] = counts[r:] + counts[:-r].copy()
    return counts


def wilcoxon_test(model: Any, baseline: Any) -> TestResult:
    """Two-sided Wilcoxon signed-rank test of paired samples.

    Parameters
    ----------
    model, baseline : 1-D arrays of the same length
        Paired values (one per user).

    Returns
    -------
    TestResult
        ``statistic`` W+ (the sum of the ranks of the positive differences) and ``p_value``.

    Notes
    -----
    Zero differences are dropped (Wilcoxon's method); the n' others are ranked by absolute
    value, ties getting their average rank; W+ sums the ranks of the positive ones.

    - Exact, when n' <= 50 and no two |d| tie: ``p = min(1, 2 min(P(W >= W+), P(W <= W+)))``
      under the null distribution of the sum of a random subset of {1..n'}.
    - Otherwise the normal approximation without continuity correction:
      ``z = (W+ - n'(n'+1)/4) / sqrt(n'(n'+1)(2n'+1)/24 - sum(t^3 - t)/48)`` over tie
      groups of size t, and ``p = 2 Phi(-|z|)``.

    This is scipy.stats.wilcoxon's default except for 13 or fewer pairs with ties or zeros,
    where scipy runs a permutation test instead. No non-zero difference gives p = 1 (no
    evidence of a difference; scipy gives NaN).

    Examples
    --------
    >>> r = wilcoxon_test([1.0, 2.0, 3.0], [0.0, 0.0, 0.0])   # W+ = 1 + 2 + 3 = 6 of 8 subsets
    >>> r.statistic, r.p_value                                 # 2 x P(W >= 6) = 2 x 1/8
    (6.0, 0.25)
    """
    d = _differences(model, baseline)
    d = d[d != 0]
    n = d.size
    if n == 0:
        return TestResult(0.0, 1.0)
    ranks, ties = _average_ranks(np.abs(d))
    w_plus = float(ranks[d > 0].sum())
    if n <= WILCOXON_EXACT_MAX and (ties == 1).all():
        counts = _signed_rank_distribution(n)
        total = counts.sum()
        w = int(round(w_plus))
        p = 2 * min(counts[w:].sum(), counts[: w + 1].sum()) / total
        return TestResult(w_plus, float(min(p, 1.0)))
    mean = n * (n + 1) / 4
    variance = n * (n + 1) * (2 * n + 1) / 24 - float((ties**3 - ties).sum()) / 48
    if variance <= 0:
        return TestResult(w_plus, 1.0)
    z = (w_plus - mean) / math.sqrt(variance)
    return TestResult(w_plus, min(1.0, math.erfc(abs(z) / math.sqrt(2))))


@with_defaults
def randomization_test(model: Any, baseline: Any, n_resamples: int = TEST_RESAMPLES, seed: Any = None) -> TestResult:
    """Two-sided paired randomization (sign-flip permutation) test of the mean difference.

    Parameters
    ----------
    model, baseline : 1-D arrays of the same length
        Paired values (one per user).
    n_resamples : int, default {TEST_RESAMPLES}
        Random sign patterns drawn; when ``2**n <= n_resamples`` all 2**n patterns are used
        and the p-value is exact.
    seed : int, numpy.random.Generator or None
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    TestResult
        ``statistic`` mean(model - baseline) and ``p_value``.

    Notes
    -----
    Under the null each pair's two values are exchangeable, so each difference d_i keeps or
    flips its sign: the null distribution is that of ``mean(s_i d_i)`` over sign patterns s.
    With B patterns (drawn, or all of them), ``p_less = (#{null <= observed} + a) / (B + a)``,
    ``p_greater`` alike and ``p = min(1, 2 min(p_less, p_greater))``, with a = 1 for drawn
    patterns (the observed one counts) and a = 0 for the exact test; comparisons allow a
    relative tolerance of 100 machine epsilons. As scipy.stats.permutation_test with
    ``permutation_type="samples"``. No pair gives NaN.

    Examples
    --------
    >>> r = randomization_test([1.0, 2.0, 3.0], [0.0, 0.0, 0.0])  # exact: 8 sign patterns
    >>> r.statistic, r.p_value      # only (+,+,+) reaches a mean of 2: p = 2 x 1/8
    (2.0, 0.25)
    """
    n_resamples, rng = check_resampling(n_resamples, seed)
    d = _differences(model, baseline)
    n = d.size
    if n == 0:
        return TestResult(math.nan, math.nan)
    observed = float(d.mean())
    tolerance = abs(np.finfo(float).eps * 100 * observed)
    exact = n < 63 and 2**n <= n_resamples
    total = 2**n if exact else n_resamples
    less = greater = 0
    done = 0
    for size in _chunks(total, n):
        if exact:
            patterns = np.arange(done, done + size)[:, None] >> np.arange(n) & 1
        else:
            patterns = rng.integers(0, 2, size=(size, n))
        null = ((2.0 * patterns - 1.0) @ d) / n
        less += int(np.count_nonzero(null <= observed + tolerance))
        greater += int(np.count_nonzero(null >= observed - tolerance))
        done += size
    extra = 0 if exact else 1
    p = 2 * min(less + extra, greater + extra) / (total + extra)
    return TestResult(observed, min(p, 1.0))


class TukeyResult(NamedTuple):
    """The randomized Tukey HSD of m models: their means, the p-value of every pair and the
    honestly significant difference."""

    means: np.ndarray
    p_values: np.ndarray
    hsd: float
    n: int


#: Up to this many models, a random permutation of the models is drawn as an index into the
#: table of all m! of them (5,040 x 7 at most), each user's m! permuted rows held for a block
#: of users at a time; beyond, by sorting m random keys per user.
PERMUTATION_TABLE_MAX_MODELS = 7


@with_defaults
def tukey_hsd_test(values: Any, n_resamples: int = TEST_RESAMPLES, seed: Any = None, ci: float = 1 - ALPHA) -> TukeyResult:
    """Randomized paired Tukey HSD test of every pair of m models (Carterette 2012).

    Parameters
    ----------
    values : array of shape (n, m)
        One row per user, one column per model. A row with a NaN (a user missing a value
        under some model) is left out: the test permutes the models within each user, so it
        uses the users with a value under every model.
    n_resamples : int, default {TEST_RESAMPLES}
        Random permutations drawn per user; when ``(m!)**n <= n_resamples``, every one of
        the ``(m!)**n`` assignments is used and the p-values are exact.
    seed : int, numpy.random.Generator or None
        Seed for ``numpy.random.default_rng``.
    ci : float, default 0.95
        Coverage of the honestly significant difference ``hsd``.

    Returns
    -------
    TukeyResult
        ``means`` (m,) over the n complete rows, ``p_values`` (m, m), symmetric, 1 on the
        diagonal, ``hsd`` the ``ci`` quantile of the resampled range (simultaneous interval
        of every pair's difference: ``mean_a - mean_b -/+ hsd``) and ``n``.

    Notes
    -----
    Under the null hypothesis that no model differs from another, the m values of a user
    are exchangeable: one resample permutes them within each user independently, takes
    each model's mean over the users and keeps the range ``max - min`` of the m means. The
    p-value of a pair is ``(#{range >= |mean_a - mean_b|} + a) / (B + a)`` over B
    resamples, with a = 1 for drawn resamples (the observed assignment counts) and a = 0
    when all are enumerated, with the relative tolerance of :func:`randomization_test`.
    Every pair is compared with the distribution of the largest difference, so the
    family-wise error rate over the pairs is controlled by the test itself: no further
    correction is needed (Smucker, Allan and Carterette 2007; Carterette 2012). With two
    models a permutation is a sign flip of the difference and the p-value is that of
    :func:`randomization_test`. A permutation is drawn as an index into the table of all m!
    (up to :data:`PERMUTATION_TABLE_MAX_MODELS` models; beyond, by sorting random keys),
    users and resamples in chunks of at most :data:`CHUNK_ELEMENTS` values: memory beyond
    the resampled sums (B x m floats) does not grow with `n_resamples`, and there is no
    Python loop over users or resamples. No complete row: NaN p-values and means; fewer
    than two: NaN ``hsd``.

    Examples
    --------
    >>> r = tukey_hsd_test([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])  # exact: 2**3 assignments
    >>> r.means.tolist(), float(r.p_values[0, 1])   # only (+,+,+) and (-,-,-) reach a range of 2
    ([2.0, 0.0], 0.25)
    """
    level = check_level("ci", ci)
    n_resamples, rng = check_resampling(n_resamples, seed)
    matrix = np.asarray(values, dtype=float)
    if matrix.ndim != 2 or matrix.shape[1] < 2:
        raise RecframeError(
            f"values has shape {matrix.shape}; the Tukey HSD test needs one row per user and one column per model, "
            "at least two. Hint: pass an (n_users, n_models) array."
        )
    matrix = matrix[~np.isnan(matrix).any(axis=1)]
    n, m = matrix.shape
    if n == 0:
        return TukeyResult(np.full(m, np.nan), np.where(np.eye(m, dtype=bool), 1.0, np.nan), math.nan, 0)
    scale = overflow_scale(matrix)
    x = matrix / scale
    means = x.mean(axis=0)
    observed = np.abs(means[:, None] - means[None, :])
    tolerance = np.finfo(float).eps * 100 * observed
    sums = np.zeros((n_resamples, m))  # replaced below when every assignment is enumerated
    total = n_resamples
    exact = False
    if m <= PERMUTATION_TABLE_MAX_MODELS:
        table = np.array(list(itertools.permutations(range(m))), dtype=np.intp)
        k = len(table)
        exact = n * math.log(k) <= math.log(n_resamples) + 1e-9 and k**n <= n_resamples
        if exact:
            total = k**n
            sums = np.zeros((total, m))
        # blocks of users: row i * k + p of `rows` is user i's values under permutation p, so one
        # resample of a block is one gather of a row per user, summed
        block = max(1, CHUNK_ELEMENTS // (k * m))
        for start in range(0, n, block):
            rows = x[start : start + block][:, table].reshape(-1, m)
            users = rows.shape[0] // k
            offsets = (np.arange(users, dtype=np.int32) * k)[:, None]  # users x k < CHUNK_ELEMENTS
            done = 0
            for size in _chunks(total, users * m):
                if exact:  # assignment t gives user i the permutation (t // k**i) mod k
                    powers = k ** np.arange(start, start + users)
                    index = ((np.arange(done, done + size)[None, :] // powers[:, None]) % k).astype(np.int32)
                else:
                    index = rng.integers(0, k, size=(users, size), dtype=np.int32)
                index += offsets
                sums[done : done + size] += np.take(rows, index, axis=0).sum(axis=0)
                done += size
    else:
        done = 0
        for size in _chunks(total, n * m):
            order = rng.random((n, size, m)).argsort(axis=-1)
            sums[done : done + size] = np.take_along_axis(x[:, None, :], order, axis=-1).sum(axis=0)
            done += size
    ranges = (sums.max(axis=1) - sums.min(axis=1)) / n
    ranges.sort()
    at_least = total - np.searchsorted(ranges, (observed - tolerance).ravel(), side="left").reshape(m, m)
    extra = 0 if exact else 1
    p_values = np.minimum(1.0, (at_least + extra) / (total + extra))
    np.fill_diagonal(p_values, 1.0)
    hsd = float(np.quantile(ranges, level)) * scale if n >= 2 else math.nan
    return TukeyResult(means * scale, p_values, hsd, n)


def _groups(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    """Two 1-D float arrays, NaN (a missing value) left out of each."""
    x, y = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    return x[~np.isnan(x)], y[~np.isnan(y)]


def welch_t_test(a: Any, b: Any) -> TestResult:
    """Two-sided Welch t test of mean(a) = mean(b), two independent groups of users.

    Returns
    -------
    TestResult
        ``statistic`` mean(a) - mean(b) and ``p_value``.

    Notes
    -----
    t = (mean(a) - mean(b)) / sqrt(s_a^2 / n_a + s_b^2 / n_b) with sample variances, on
    Welch-Satterthwaite degrees of freedom; as ``scipy.stats.ttest_ind(a, b,
    equal_var=False)``. NaN with fewer than two values in a group; with both variances 0 the
    p-value is 0 when the means differ and NaN when they do not. Needs scipy.

    Examples
    --------
    >>> r = welch_t_test([1.0, 2.0, 3.0, 4.0], [1.0, 1.0, 2.0])
    >>> round(r.statistic, 4), round(r.p_value, 4)
    (1.1667, 0.1778)
    """
    x, y = _groups(a, b)
    if x.size < 2 or y.size < 2:
        return TestResult(float(x.mean()) - float(y.mean()) if x.size and y.size else math.nan, math.nan)
    difference = float(x.mean() - y.mean())
    va, vb = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    if va + vb == 0:
        return TestResult(difference, 0.0 if difference != 0 else math.nan)
    t = difference / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (x.size - 1) + vb**2 / (y.size - 1))
    return TestResult(difference, float(2 * _scipy_special().stdtr(df, -abs(t))))


def mann_whitney_test(a: Any, b: Any) -> TestResult:
    """Two-sided Mann-Whitney U test of two independent groups, normal approximation.

    Returns
    -------
    TestResult
        ``statistic`` U of `a` (the pairs (a_i, b_j) with a_i > b_j, ties counting 1/2) and
        ``p_value``.

    Notes
    -----
    With average ranks over both groups, U_a = R_a - n_a (n_a + 1) / 2; the p-value is
    ``2 P(Z >= (max(U_a, U_b) - n_a n_b / 2 - 1/2) / sigma)``, sigma^2 = n_a n_b / 12 ((n + 1) -
    sum(t^3 - t) / (n (n - 1))) over the tie groups t: continuity and tie corrections, as
    ``scipy.stats.mannwhitneyu(a, b, method="asymptotic")``. Every value tied: p = 1. NaN
    with an empty group. Needs only numpy.

    Examples
    --------
    >>> r = mann_whitney_test([3.0, 4.0, 5.0], [1.0, 2.0, 3.0])
    >>> r.statistic, round(r.p_value, 4)
    (8.5, 0.1212)
    """
    x, y = _groups(a, b)
    if x.size == 0 or y.size == 0:
        return TestResult(math.nan, math.nan)
    n_a, n_b = x.size, y.size
    n = n_a + n_b
    ranks, ties = _average_ranks(np.concatenate([x, y]))
    u_a = float(ranks[:n_a].sum() - n_a * (n_a + 1) / 2)
    u = max(u_a, n_a * n_b - u_a)
    variance = n_a * n_b / 12 * ((n + 1) - float((ties**3 - ties).sum()) / (n * (n - 1)))
    if variance <= 0:
        return TestResult(u_a, 1.0)
    z = (u - n_a * n_b / 2 - 0.5) / math.sqrt(variance)
    return TestResult(u_a, min(1.0, math.erfc(z / math.sqrt(2))))


def permutation_test(a: Any, b: Any, n_resamples: int = TEST_RESAMPLES, seed: Any = None) -> TestResult:
    """Two-sided permutation test of mean(a) = mean(b), two independent groups of users.

    Returns
    -------
    TestResult
        ``statistic`` mean(a) - mean(b) and ``p_value``.

    Notes
    -----
    Under the null the group labels are exchangeable: the null distribution is that of the
    difference of means over the ways to split the pooled values into groups of n_a and n_b
    (all C(n, n_a) of them when that is at most `n_resamples`: exact; else `n_resamples`
    random ones). ``p_less``, ``p_greater`` and ``p`` as :func:`randomization_test`: as
    ``scipy.stats.permutation_test`` with ``permutation_type="independent"``. NaN with an
    empty group.

    Examples
    --------
    >>> r = permutation_test([3.0, 4.0], [1.0, 2.0])  # exact: 6 splits, 1 as extreme each way
    >>> r.statistic, round(r.p_value, 4)
    (2.0, 0.3333)
    """
    n_resamples, rng = check_resampling(n_resamples, seed)
    x, y = _groups(a, b)
    if x.size == 0 or y.size == 0:
        return TestResult(math.nan, math.nan)
    pooled = np.concatenate([x, y])
    n, n_a = pooled.size, x.size
    observed = float(x.mean() - y.mean())
    tolerance = abs(np.finfo(float).eps * 100 * observed)
    exact = math.comb(n, n_a) <= n_resamples
    total = math.comb(n, n_a) if exact else n_resamples
    splits = itertools.combinations(range(n), n_a) if exact else None
    less = greater = 0
    sum_all = pooled.sum()
    for size in _chunks(total, n):
        if splits is not None:
            chosen = np.array(list(itertools.islice(splits, size)), dtype=np.intp).reshape(size, n_a)
            in_a = pooled[chosen].sum(axis=1)
        else:
            order = rng.permuted(np.tile(np.arange(n), (size, 1)), axis=1)
            in_a = pooled[order[:, :n_a]].sum(axis=1)
        null = in_a / n_a - (sum_all - in_a) / (n - n_a)
        less += int(np.count_nonzero(null <= observed + tolerance))
        greater += int(np.count_nonzero(null >= observed - tolerance))
    extra = 0 if exact else 1
    p = 2 * min(less + extra, greater + extra) / (total + extra)
    return TestResult(observed, min(p, 1.0))


def adjust_pvalues(p_values: Any, correction: Correction | None) -> np.ndarray:
    """p-values adjusted for multiple testing over the whole array (the family).

    Parameters
    ----------
    p_values : 1-D array
        NaN p-values (tests that could not be run) stay NaN and are not counted in the family.
    correction : {"holm", "bonferroni"} or None
        None returns the p-values unchanged.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, in the input order, capped at 1.

    Notes
    -----
    With m non-NaN p-values:

    - Bonferroni: ``min(1, m p_i)``.
    - Holm: sort ascending, ``p_(j) -> min(1, max_{l <= j} (m - l + 1) p_(l))`` (j, l from 1):
      controls the family-wise error rate like Bonferroni and rejects at least as much.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03], "bonferroni").tolist()
    [0.03, 0.12, 0.09]
    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm").tolist()   # 3 x 0.01, max(2 x 0.03, .), 1 x 0.04
    [0.03, 0.06, 0.06]
    """
    check_choice("correction", correction, CORRECTIONS)
    p = np.asarray(p_values, dtype=float).copy()
    valid = np.flatnonzero(~np.isnan(p))
    m = valid.size
    if correction is None or m == 0:
        return p
    if correction == "bonferroni":
        p[valid] = np.minimum(1.0, m * p[valid])
        return p
    order = valid[np.argsort(p[valid], kind="stable")]
    scaled = (m - np.arange(m)) * p[order]
    p[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return p
