"""Interval options are checked whether or not a call reads them (issue 38): a bad
``n_resamples``, ``seed`` or ``ci_method`` is refused by ``summary`` and ``curve`` without
``ci=``, and by the command line's ``--n-resamples`` and ``--seed`` without ``--ci``, naming the
argument."""

from __future__ import annotations

from pathlib import Path

import pytest

import recframe
from conftest import TWO_MODELS_RECS as RECS
from conftest import assert_refused, run_cli
from recframe import RecframeError


@pytest.mark.parametrize(
    "flags, words",
    [
        (["--n-resamples", "-5"], "--n-resamples -5"),
        (["--seed", "-1"], "--seed -1"),
        (["--ci-method", "t", "--n-resamples", "0"], "--n-resamples 0"),
    ],
)
@pytest.mark.parametrize("command", ["report", "evaluate"])
def test_interval_flags_are_checked_without_ci(recs_csv: Path, command: str, flags: list[str], words: str) -> None:
    code, _, err = run_cli(command, recs_csv, "--k", "1", "--by", "model", *flags)
    assert_refused(code, err, words)


@pytest.mark.parametrize("options", [{"n_resamples": -5}, {"seed": -1}, {"ci_method": "zzz"}, {"n_resamples": 10**9}])
def test_summary_checks_interval_options_without_ci(options: dict[str, object]) -> None:
    with pytest.raises(RecframeError) as caught:
        recframe.summary(RECS, k=1, by="model", **options)  # type: ignore[arg-type]
    assert caught.value.argument == next(iter(options))


def test_the_curve_checks_them_too() -> None:
    with pytest.raises(RecframeError) as caught:
        recframe.curve(RECS, k_max=2, n_resamples=-5)
    assert caught.value.argument == "n_resamples"
