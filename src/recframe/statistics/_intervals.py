"""``summary(..., ci=...)``: the interval options checked, and the limit past which an engine's
variance overflows. The intervals themselves are aggregates of the summary (:mod:`recframe.statistics._summary`).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from recframe.errors import RecframeError, ref
from recframe.statistics import stats


def check_options(ci: Any, ci_method: Any, n_resamples: Any, seed: Any) -> tuple[float | None, str, int, Any]:
    """Check the interval options of :func:`recframe.summary`, ``ci=None`` (no interval)
    included: every one is checked whether or not the call reads it. Raise naming the bad one."""
    level = None if ci is None else stats.check_level("ci", ci)
    method = stats.check_choice("ci_method", ci_method, stats.CI_METHODS)
    n, _ = stats.check_resampling(n_resamples, seed)
    return level, method, n, seed


#: past this magnitude a per-user value's square may overflow an engine's float64 variance:
#: such an interval (t, the Poisson bootstrap) is refused in the engine (Polars scales the
#: values of the others first)
ENGINE_VALUE_LIMIT = 1e150


def refuse_past_limit(largest: pl.DataFrame, instead: str = "evaluate the same data with Polars") -> None:
    """Refuse a t interval computed by an engine's variance where a metric's per-user values
    (their largest magnitudes, one column each) pass ENGINE_VALUE_LIMIT;
    `instead`: what gives the interval, for the hint."""
    for c in largest.columns:
        value: float | None = largest[c].max() if largest.height else None  # type: ignore[assignment]
        if value is not None and not value <= ENGINE_VALUE_LIMIT:
            raise RecframeError(
                f"column {c!r} has per-user values up to {value:.3g}, past what an engine's variance holds exactly "
                f"(1e150). Hint: {instead}, which scales such values, for {ref('ci')}."
            )
