"""Round 3 of "every number right or refused" (issue 38): files written over keep their
permissions, output paths no file can take are refused before any work, sums that overflow,
NaN item groups, CSV quoting and arguments validated whether or not a call reads them.

Every case here failed on the main it was found on; each names the argument or column at fault.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import recframe
from recframe import RecframeError, cli
from recframe._atomic import write_atomic

RECS = pl.DataFrame(
    {
        "model": ["A", "A", "A", "B", "B", "B"],
        "user_id": [1, 1, 2, 1, 1, 2],
        "item_id": [10, 11, 20, 11, 10, 20],
        "rank": [1, 2, 1, 1, 2, 1],
        "relevance": [4, None, 5, None, 4, 5],
    }
)


def main(*argv: str | Path) -> tuple[int, str, str]:
    """Run the command line in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def assert_refused(code: int, err: str, *fragments: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Hint:" in lines[0] and "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture
def recs_csv(tmp_path: Path) -> Path:
    path = tmp_path / "recs.csv"
    RECS.write_csv(path)
    return path


# ---------------------------------------------------------------------------- 1. permissions


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444 | 0o200])
def test_a_rewritten_file_keeps_its_permission_bits(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "private.csv"
    path.write_text("old\n")
    os.chmod(path, mode)
    write_atomic(path, lambda p: p.write_text("new\n"))
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == mode


def test_a_new_file_gets_what_open_would_give_it_under_a_restrictive_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        write_atomic(tmp_path / "new.csv", lambda p: p.write_text("x\n"))
        with open(tmp_path / "plain.csv", "w") as handle:
            handle.write("x\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new.csv").st_mode) == stat.S_IMODE(os.stat(tmp_path / "plain.csv").st_mode) == 0o600


def test_a_new_file_under_the_usual_umask_is_not_left_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "new.csv", lambda p: p.write_text("x\n"))
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new.csv").st_mode) == 0o644


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file to another user")
def test_a_file_owned_by_another_user_keeps_its_owner_and_group(tmp_path: Path) -> None:
    path = tmp_path / "theirs.csv"
    path.write_text("old\n")
    os.chown(path, 12345, 23456)
    os.chmod(path, 0o640)
    write_atomic(path, lambda p: p.write_text("new\n"))
    info = os.stat(path)
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (12345, 23456, 0o640)


def test_the_cli_keeps_a_private_results_file_private(tmp_path: Path, recs_csv: Path) -> None:
    out = tmp_path / "results.csv"
    out.write_text("old\n")
    os.chmod(out, 0o600)
    code, _, err = main("evaluate", recs_csv, "--k", "1", "--by", "model", "--out", out, "--quiet")
    assert code == 0, err
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    assert out.read_text().startswith("model,")


def test_report_page_keeps_a_private_page_private(tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    out.write_text("old\n")
    os.chmod(out, 0o600)
    recframe.report_page(RECS, k=1, by="model", out=out)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    assert out.read_text().startswith("<!")


# ---------------------------------------------------------------------------- 7. output paths


def _bad_outputs(tmp_path: Path) -> dict[str, tuple[str, str]]:
    loop = tmp_path / "loop.csv"
    os.symlink(loop, loop)
    (tmp_path / "a_file").write_text("x\n")
    return {
        "loop": (str(loop), "loops"),
        "nul": (str(tmp_path / "a\0b.csv"), "NUL byte"),
        "too long": (str(tmp_path / ("n" * 300 + ".csv")), "too long"),
        "slash": (str(tmp_path / "new.csv") + "/", "ends with a slash"),
        "under a file": (str(tmp_path / "a_file" / "x.csv"), "is a file, not a folder"),
        "missing folder": (str(tmp_path / "nowhere" / "x.csv"), "does not exist"),
    }


@pytest.mark.parametrize("case", ["loop", "nul", "too long", "slash", "under a file", "missing folder"])
def test_the_cli_refuses_an_output_path_no_file_can_take(tmp_path: Path, recs_csv: Path, case: str) -> None:
    out, words = _bad_outputs(tmp_path)[case]
    for command in (["evaluate", recs_csv, "--k", "1"], ["report", recs_csv, "--k", "1"], ["inspect", recs_csv, "--k", "1"]):
        code, _, err = main(*command, "--out", out)
        assert_refused(code, err, "--out", words)
    assert not (tmp_path / "new.csv").exists()


@pytest.mark.parametrize("case", ["loop", "nul", "too long", "slash", "under a file", "missing folder"])
def test_report_page_refuses_an_output_path_no_file_can_take(tmp_path: Path, case: str) -> None:
    out, words = _bad_outputs(tmp_path)[case]
    with pytest.raises(RecframeError, match=words) as caught:
        recframe.report_page(RECS, k=1, by="model", out=out)
    assert caught.value.argument == "out"
    assert not (tmp_path / "new.csv").exists()


def test_the_curve_plot_path_is_checked_too(tmp_path: Path, recs_csv: Path) -> None:
    pytest.importorskip("matplotlib")
    code, _, err = main("curve", recs_csv, "--k", "3", "--plot", str(tmp_path / "p.png") + "/")
    assert_refused(code, err, "--plot", "ends with a slash")


# ---------------------------------------------------------------------------- 4. sums that overflow

HUGE = pl.DataFrame(
    {
        "model": ["A"] * 4 + ["B"] * 4,
        "user_id": [1, 2, 3, 4] * 2,
        "segment": ["x", "x", "y", "y"] * 2,
        "ndcg@10": [1e308, 1e308, 0.5, 0.25, 1e308, 1.5e308, 0.1, 0.2],
    }
)


def test_disparity_means_of_finite_values_near_the_float_maximum_are_finite() -> None:
    out = recframe.disparity(HUGE, group="segment", test="permutation", seed=0).sort("model")
    a, b = out.row(0, named=True), out.row(1, named=True)
    assert (a["high_mean"], a["low_mean"]) == (1e308, (0.5 + 0.25) / 2)
    assert b["high_mean"] == 1.25e308 and b["low_mean"] == pytest.approx((0.1 + 0.2) / 2)
    assert a["difference"] == 1e308 - 0.375 and b["difference"] == 1.25e308 - 0.15
    for row in (a, b):
        for column in ("difference", "mad", "gap_lo", "gap_hi", "mean_x", "p_value"):
            assert np.isfinite(row[column]), (column, row)
    assert b["gap_lo"] <= b["difference"] <= b["gap_hi"]


def test_disparity_with_values_of_ordinary_size_is_unchanged_by_the_scaling() -> None:
    small = HUGE.with_columns(pl.col("ndcg@10") / 1e308 * 0.5)
    out = recframe.disparity(small, group="segment", test="permutation", seed=0).sort("model")
    expected = small.filter(pl.col("model") == "B").group_by("segment").agg(pl.col("ndcg@10").mean()).sort("segment")
    assert out.row(1, named=True)["high_mean"] == expected["ndcg@10"][0]


def test_compare_means_near_the_float_maximum_are_finite() -> None:
    out = recframe.compare(HUGE.drop("segment"), by="model", baseline="B", user="user_id").row(0, named=True)
    assert out["model_mean"] == pytest.approx(1e308 / 2, rel=1e-12)  # (1e308 + 1e308 + 0.5 + 0.25) / 4
    assert out["baseline_mean"] == pytest.approx(1e308 / 4 + 1.5e308 / 4, rel=1e-12)
    assert all(np.isfinite(out[c]) for c in ("delta", "delta_lo", "delta_hi", "p_value"))


@pytest.mark.parametrize("call", ["disparity", "compare"])
def test_a_difference_past_the_float_maximum_is_refused_with_the_reason(call: str) -> None:
    opposite = HUGE.with_columns(
        pl.when(pl.col("model") == "B").then(-pl.col("ndcg@10")).otherwise(pl.col("ndcg@10")).alias("ndcg@10")
    )
    with pytest.raises(RecframeError, match="beyond the largest float64") as caught:
        if call == "disparity":
            recframe.disparity(opposite.with_columns(pl.col("segment").reverse().over("model")), group="segment")
        else:
            recframe.compare(opposite.drop("segment"), by="model", baseline="B", user="user_id")
    assert "'ndcg@10'" in str(caught.value) and "rescale" in str(caught.value)


# ---------------------------------------------------------------------------- 16. a metric as group


def test_disparity_group_that_is_a_metric_column_says_so() -> None:
    with pytest.raises(RecframeError, match="is a metric column: group must be a column that groups users") as caught:
        recframe.disparity(HUGE, group="ndcg@10")
    assert caught.value.argument == "group" and "segment" in str(caught.value)


# ---------------------------------------------------------------------------- 6, 20. item groups

GROUP_RECS = pl.DataFrame(
    {
        "user_id": [1, 1, 1, 2, 2],
        "item_id": ["a", "b", "c", "a", "c"],
        "rank": [1, 2, None, 1, 2],
        "relevance": [1, None, 1, None, 1],
    }
)


@pytest.mark.parametrize("backend", ["polars", "lazy", "pandas"])
def test_a_nan_item_group_is_refused_alike_on_every_backend(backend: str) -> None:
    items = pl.DataFrame({"item_id": ["a", "b", "c"], "genre": [1.0, float("nan"), 2.0]})
    recs: object = GROUP_RECS
    side: object = items
    if backend == "lazy":
        recs, side = GROUP_RECS.lazy(), items.lazy()
    elif backend == "pandas":
        recs, side = GROUP_RECS.to_pandas(), items.to_pandas()
    with pytest.raises(RecframeError, match=r"column 'genre' of items= \(item_group=\) has 1 null or NaN value") as caught:
        out = recframe.item_groups(recs, k=2, items=side, item_group="genre")
        if isinstance(out, pl.LazyFrame):
            out.collect()
    assert caught.value.argument == "items"


def test_a_nan_inside_a_label_list_group_is_refused() -> None:
    items = pl.DataFrame({"item_id": ["a", "b", "c"], "genre": [[1.0, float("nan")], [1.0], [2.0]]})
    with pytest.raises(RecframeError, match="null or NaN group inside a list"):
        recframe.item_groups(GROUP_RECS, k=2, items=items, item_group="genre")


def test_n_items_is_a_whole_count_and_a_weighted_one_only_for_label_lists() -> None:
    plain = pl.DataFrame({"item_id": ["a", "b", "c"], "genre": ["pop", "pop", "jazz"]})
    out = recframe.item_groups(GROUP_RECS, k=2, items=plain, item_group="genre")
    assert out.schema["n_items"] == pl.Int64 and out["n_items"].to_list() == [1, 2]
    assert "171.000" not in recframe.report(out.with_columns(pl.lit(171).alias("n_items")), format="markdown")
    popularity = recframe.item_groups(GROUP_RECS, k=2, train=GROUP_RECS.select("user_id", "item_id"), item_group="popularity")
    assert popularity.schema["n_items"] == pl.Int64
    lists = pl.DataFrame({"item_id": ["a", "b", "c"], "genre": [["x", "y"], ["x"], ["y"]]})
    weighted = recframe.item_groups(GROUP_RECS, k=2, items=lists, item_group="genre")
    assert weighted.schema["n_items"] == pl.Float64 and weighted["n_items"].to_list() == [1 / 2 + 1, 1 / 2 + 1]


# ---------------------------------------------------------------------------- 10. stray quotes


@pytest.mark.parametrize("lines", [1, 2, 3])
def test_stray_quotes_in_a_csv_are_a_usage_error_naming_the_line(tmp_path: Path, lines: int) -> None:
    path = tmp_path / "quotes.csv"
    path.write_text("model,user_id,item_id,rank,relevance\n" + 'A,1,""x",1,1\n' * lines)
    code, out, err = main("evaluate", path, "--k", "1")
    assert_refused(code, err, "quotes.csv, line 2" if lines < 3 else "quotes.csv, line ")
    assert out == ""


def test_well_quoted_csv_fields_still_read(tmp_path: Path) -> None:
    path = tmp_path / "quoted.csv"
    path.write_text('model,user_id,item_id,rank,relevance\nA,1,"x, y",1,1\nA,2,"multi\nline",1,1\nA,3,"a ""q"" b",1,1\n')
    code, out, err = main("evaluate", path, "--k", "1", "--format", "csv", "--quiet")
    assert code == 0, err
    assert out.splitlines()[1].startswith("3,")  # n_users: three users, each with its item


# ---------------------------------------------------------------------------- 18. arguments not read


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
    code, _, err = main(command, recs_csv, "--k", "1", "--by", "model", *flags)
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
