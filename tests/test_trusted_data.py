"""checks=False (--no-checks): the data checks switched off for data the user vouches for.

The same numbers on clean data, no check aggregate computed, defects no longer refused (and the
call says the checks were off), its values checked, and the command line's flag and line."""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
import pytest

import recframe
from conftest import BACKENDS, to_polars
from recframe import cli as cli
from recframe import options as options_table
from recframe.engine import _call, _checks, _engine
from recframe.errors import RecframeError, UncheckedDataWarning

CLEAN = pl.DataFrame(
    {
        "model": ["A", "A", "A", "A", "B", "B", "B", "B"],
        "user_id": [1, 1, 1, 2, 1, 1, 2, 2],
        "item_id": [10, 11, 12, 10, 12, 10, 11, 13],
        "rank": [1, 2, 3, 1, 1, 2, 1, 2],
        "relevance": [1.0, 0.0, 3.0, 2.0, 3.0, 1.0, 0.0, 1.0],
    }
)
#: a repeated (user, item) row and a NaN relevance, each within k and relevant
DUPLICATE = pl.concat([CLEAN, CLEAN.head(1)])
NAN_RELEVANCE = CLEAN.with_columns(
    pl.when(pl.col("item_id") == 12).then(float("nan")).otherwise(pl.col("relevance")).alias("relevance")
)
CHEAP = [name for name in ("polars", "polars-lazy", "pandas", "duckdb") if name in BACKENDS]


def unchecked(function: Any, *args: Any, **kwargs: Any) -> Any:
    """`function` with checks=False, asserting that the call names the checks off (the warning)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(*args, checks=False, **kwargs)
    named = [w for w in caught if issubclass(w.category, UncheckedDataWarning)]
    assert named and "data checks off (checks=False)" in str(named[0].message)
    assert named[0].filename == __file__  # pointed at the caller's line, not recframe's
    return result


@pytest.mark.parametrize("backend", CHEAP)
def test_clean_data_gives_the_same_numbers(backend: str) -> None:
    frame = BACKENDS[backend](CLEAN)
    for function, extra in ((recframe.summary, {}), (recframe.per_user, {}), (recframe.summary, {"score": "rank"})):
        checked = to_polars(function(frame, k=[1, 2], by="model", **extra))
        assert to_polars(unchecked(function, frame, k=[1, 2], by="model", **extra)).equals(checked)


def test_no_check_aggregate_is_computed() -> None:
    """With checks off the plan has no flag and no count of a check, and the per-list table
    the metrics are finished from holds none of their columns."""

    def table_columns(**options: Any) -> set[str]:
        kwargs = _call.resolve([2], None, {"by": "model", **options}, options_table.PER_USER_NAMES, "per_user")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UncheckedDataWarning)
            i = _call.inputs(CLEAN.with_columns(pl.col("rank").cast(pl.Float64)), kwargs)
        checks = _checks.plan(i.spec)
        lf = _engine.flag_rows(_engine.prepare(i.lf, i.truth, i.spec, i.users, i.exclude), i.spec)
        return set(_engine.list_table(lf, i.spec, checks).collect_schema().names())

    check_columns = {"__rf_n_rows", "__rf_n_items_set", "__rf_min_rank_any", "__rf_bad_rel", "__rf_dup_items", "__rf_bad_rank"}
    assert check_columns <= table_columns(check_duplicates=True)
    assert not check_columns & table_columns(checks=False)
    spec = _call.inputs(CLEAN, _call.resolve(2, None, {}, options_table.PER_USER_NAMES, "per_user")).spec
    off = _checks.plan(_spec_off(spec))
    assert (off.row_flags, off.all_rows, off.duplicates, off.duplicate_rows, off.columns) == ({}, [], None, {}, ())


def _spec_off(spec: Any) -> Any:
    import dataclasses

    return dataclasses.replace(spec, selection=dataclasses.replace(spec.selection, checks=False))


@pytest.mark.parametrize("backend", CHEAP)
@pytest.mark.parametrize("defect", ["duplicate", "nan relevance"])
def test_a_defect_is_refused_with_checks_and_not_without(backend: str, defect: str) -> None:
    if backend == "pandas" and defect == "nan relevance":
        pytest.skip("pandas reads NaN in a float column as its missing value: null, unjudged, never refused")
    frame = BACKENDS[backend](DUPLICATE if defect == "duplicate" else NAN_RELEVANCE)
    with pytest.raises(RecframeError, match="duplicate" if defect == "duplicate" else "NaN or infinite"):
        to_polars(recframe.summary(frame, k=2, by="model"))
    result = to_polars(unchecked(recframe.summary, frame, k=2, by="model"))
    assert result.height == 2  # computed, whatever the defect made of it: the user vouched for the data


def test_every_entry_point_takes_it() -> None:
    recs, truth = CLEAN.drop("relevance"), CLEAN.filter(pl.col("model") == "A").select("user_id", "item_id", "relevance")
    calls = {
        "curve": lambda c: recframe.curve(CLEAN, k_max=2, by="model", checks=c),
        "item_groups": lambda c: recframe.item_groups(
            CLEAN, by="model", item_group="popularity", train=CLEAN.select("user_id", "item_id"), checks=c
        ),
        "per_item": lambda c: recframe.per_item(CLEAN, by="model", checks=c),
        "tied_cutoffs": lambda c: recframe.tied_cutoffs(CLEAN, score="rank", by="model", checks=c),
        "agreement": lambda c: recframe.agreement(CLEAN, k=2, by="model", checks=c),
        "compare_recommendations": lambda c: recframe.compare_recommendations(CLEAN, by="model", baseline="A", checks=c),
        "inspect": lambda c: recframe.inspect(CLEAN, by="model", checks=c),
        "truth=": lambda c: recframe.summary(recs, truth=truth, by="model", checks=c),
    }
    for name, call in calls.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UncheckedDataWarning)
            assert to_polars(call(False)).equals(to_polars(call(True))), name


def test_the_page_lists_the_checks_as_off() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UncheckedDataWarning)
        page = recframe.report_page(CLEAN, by="model", k=2, ci=None, checks=False)
    assert "data checks off (checks=False)" in page
    assert "<h3>Data checks: off (checks=False)</h3>" in page and "all passed" not in page
    assert "<td>checks</td><td>False</td><td>given</td>" in page  # in the conventions, set by the caller


@pytest.mark.parametrize("value", ["no", None, 0])
def test_bad_values_name_checks(value: Any) -> None:
    with pytest.raises(RecframeError, match=rf"checks={value!r} must be True or False"):
        recframe.summary(CLEAN, checks=value)


def test_contradictions_are_refused() -> None:
    for value in (True, "used"):
        with pytest.raises(RecframeError, match=r"check_duplicates=.* asks for the duplicate check, and checks=False"):
            recframe.summary(CLEAN, checks=False, check_duplicates=value)
    with pytest.raises(RecframeError, match=r'empty_users="error" asks for a data check .*, and checks=False'):
        recframe.summary(CLEAN, checks=False, empty_users="error")
    # the one consistent combination, and check_duplicates alone, as before
    unchecked(recframe.summary, DUPLICATE, check_duplicates=False)
    assert recframe.summary(DUPLICATE.filter(pl.col("model") == "B"), check_duplicates=False).height == 1


def test_the_command_line_flag(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "dup.parquet"
    DUPLICATE.write_parquet(path)
    args = ["evaluate", str(path), "--by", "model", "--k", "2", "--format", "csv", "--quiet"]
    assert cli.main(args) == 2
    assert "duplicate" in capsys.readouterr().err
    assert cli.main([*args, "--no-checks"]) == 0
    out, err = capsys.readouterr()
    assert err.count("recframe: data checks off (--no-checks): you vouch for the data") == 1
    assert "warning" not in err  # said once, in the command line's words
    expected = recframe.summary(DUPLICATE.unique(), by="model", k=2)  # (the duplicate changes a number)
    assert pl.read_csv(out.encode()).columns == expected.columns
    assert cli.main([*args, "--no-checks", "--check-duplicates", "all"]) == 2
    assert "--check-duplicates all asks for the duplicate check, and --no-checks switches" in capsys.readouterr().err
    assert cli.main([*args, "--no-checks", "--no-check-duplicates"]) == 0
