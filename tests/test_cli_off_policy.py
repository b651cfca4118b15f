"""``recframe off-policy``: recframe.off_policy on parquet or CSV logs from the command line, the
same numbers as the API, the output formats, and its refusals in command-line words."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import recframe
from conftest import assert_refused, run_cli
from test_off_policy import LOGS  # the four hand-worked rows: w = target / propensity = 2, 0, 2, 2

# two target rankings (one item per context at rank 1): "new" places the logged item in
# contexts 1 and 3, "old" in 2 and 4
RECS = pl.DataFrame(
    {
        "model": ["new"] * 4 + ["old"] * 4,
        "context_id": [1, 2, 3, 4] * 2,
        "item_id": ["a", "x", "a", "x", "x", "b", "x", "c"],
        "rank": [1] * 8,
    }
)


@pytest.fixture
def logs_csv(tmp_path: Path) -> Path:
    path = tmp_path / "logs.csv"
    LOGS.write_csv(path)
    return path


@pytest.fixture
def logs_parquet(tmp_path: Path) -> Path:
    path = tmp_path / "logs.parquet"
    LOGS.write_parquet(path)
    return path


def _csv(out: str) -> dict[str, dict[str, object]]:
    """The estimator rows of a --format csv output, by estimator (and model)."""
    table = pl.read_csv(out.encode())
    return {
        "/".join(str(row[c]) for c in table.columns if c in ("model", "estimator")): row for row in table.iter_rows(named=True)
    }


def test_ips_and_snips_by_hand_from_a_csv_file(logs_csv: Path) -> None:
    code, out, err = run_cli("off-policy", logs_csv, "--target", "target", "--estimators", "ips,snips", "--format", "csv")
    assert code == 0 and err == "", err
    got = _csv(out)
    assert list(got) == ["ips", "snips"]
    # IPS: mean(w r) = (2 + 0 + 0 + 2) / 4; SNIPS: sum w r / sum w = 4 / 6
    assert got["ips"]["value"] == pytest.approx(1.0) and got["snips"]["value"] == pytest.approx(2 / 3)
    assert got["ips"]["se"] == pytest.approx(math.sqrt(4 / 3 / 4))
    for row in got.values():
        assert (row["n"], row["on_policy"], row["ess"], row["largest_weight"], row["supported"]) == (4, 0.5, 3.0, 2.0, 0.75)


def test_the_parquet_output_is_the_apis_frame(logs_parquet: Path, tmp_path: Path) -> None:
    out = tmp_path / "estimates.parquet"
    args = ["--target", "target", "--predicted", "q", "--target-predicted", "qe", "--max-weight", "1.5"]
    code, _, err = run_cli("off-policy", logs_parquet, *args, "--switch-threshold", "1", "--ci", "0.9", "--out", out)
    assert code == 0, err
    expected = recframe.off_policy(
        LOGS, target="target", predicted="q", target_predicted="qe", max_weight=1.5, switch_threshold=1.0, ci=0.9
    )
    assert expected["estimator"].to_list() == ["ips", "snips", "clipped_ips", "dm", "dr", "sndr", "switch_dr"]
    assert_frame_equal(pl.read_parquet(out), expected)


def test_recommendations_by_model(logs_csv: Path, tmp_path: Path) -> None:
    recs = tmp_path / "recs.parquet"
    RECS.write_parquet(recs)
    code, out, err = run_cli(
        "off-policy", logs_csv, "--recommendations", recs, "--by", "model", "--estimators", "ips,snips", "--format", "json"
    )
    assert code == 0, err
    rows = json.loads(out)
    got = {(row["model"], row["estimator"]): row["value"] for row in rows}
    # new: w = 2, 0, 2, 0 with r = 1, 0, 0, 1 -> IPS 2/4, SNIPS 2/4; old: w = 0, 4, 0, 4 -> IPS 4/4, SNIPS 4/8
    assert got == pytest.approx({("new", "ips"): 0.5, ("new", "snips"): 0.5, ("old", "ips"): 1.0, ("old", "snips"): 0.5})
    api = recframe.off_policy(LOGS, ["ips", "snips"], recommendations=RECS, by="model")
    assert [row["value"] for row in rows] == pytest.approx(api["value"].to_list())


def test_a_single_slot_log_without_positions(tmp_path: Path) -> None:
    path = tmp_path / "logs.csv"
    LOGS.drop("position").rename({"context_id": "impression", "propensity": "p", "reward": "click"}).write_csv(path)
    names = ["--context", "impression", "--propensity", "p", "--reward", "click", "--no-position"]
    code, out, err = run_cli("off-policy", path, "--target", "target", *names, "--estimators", "ips", "--format", "csv")
    assert code == 0, err
    assert _csv(out)["ips"]["value"] == pytest.approx(1.0)
    # without --no-position the missing column is named, with the flag that does without it
    code, _, err = run_cli("off-policy", path, "--target", "target", *names[:-1])
    assert_refused(code, err, "has no column 'position' (--position)", "--no-position for a single-slot log")


def test_the_table_and_markdown_formats(logs_csv: Path) -> None:
    code, out, err = run_cli("off-policy", logs_csv, "--target", "target", "--format", "markdown", "--precision", "3")
    assert code == 0, err
    assert out.splitlines()[0].startswith("| estimator") and "| ips " in out and "0.667" in out
    code, out, _ = run_cli("off-policy", logs_csv, "--target", "target")
    assert code == 0 and "snips" in out and "largest_weight" in out


def test_the_help_names_the_estimators_and_the_page() -> None:
    code, out, err = run_cli("off-policy", "--help")
    assert code == 0 and err == ""
    assert out.startswith("usage: recframe off-policy LOGS (--target COLUMN | --recommendations RECS)")
    assert "switch_dr" in out and "docs/off-policy.md" in out and "--no-position" in out
    code, out, _ = run_cli("--help")
    assert "off-policy" in out


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ([], ["needs the target policy", "--target COLUMN", "--recommendations RECS"]),
        (["--target", "target", "--recommendations", "LOGS"], ["--target and --recommendations"]),
        (["--target", "target", "--estimators", "ips,bogus"], ["--estimators ips,bogus", "'bogus' is no estimator"]),
        (["--target", "target", "--estimators", "dr"], ["'dr' needs --predicted", "out of --estimators"]),
        (["--target", "target", "--estimators", "clipped_ips"], ["--max-weight"]),
        (["--target", "target", "--max-weight", "-1"], ["--max-weight -1.0 must be a number > 0"]),
        (["--target", "target", "--ci", "1.5"], ["--ci 1.5"]),
        (["--target", "chance"], ["column 'chance' (the --target argument) is not in the logs"]),
        (["--target", "target", "--reward", "clicks"], ["'clicks'", "--reward"]),
        (["--target", "target", "--estimators", "ips,sips"], ["mixes slate estimators"]),
        (["--target", "target", "--by", ""], ["empty column name"]),
        (["--target", "target", "--no-position", "--position", "slot"], ["--no-position"]),
    ],
)
def test_bad_options_are_refused_by_name(logs_csv: Path, args: list[str], fragments: list[str]) -> None:
    args = [str(logs_csv) if a == "LOGS" else a for a in args]
    code, out, err = run_cli("off-policy", logs_csv, *args)
    assert out == ""
    assert_refused(code, err, *fragments)


@pytest.mark.parametrize(
    ("column", "value", "fragments"),
    [
        ("propensity", 0.0, ["column 'propensity' (the --propensity argument)", "outside (0, 1]"]),
        ("reward", None, ["column 'reward' (the --reward argument)", "null"]),
        ("context_id", 1, ["2 rows of one logged slot", "context_id=1"]),
    ],
)
def test_bad_logs_are_refused_by_column(tmp_path: Path, column: str, value: object, fragments: list[str]) -> None:
    """Context 2's row gets `value` in `column`: the logs are refused naming the file and column."""
    path = tmp_path / "logs.parquet"
    changed = pl.when(pl.col("context_id") == 2).then(pl.lit(value)).otherwise(pl.col(column))
    LOGS.with_columns(changed.cast(LOGS.schema[column]).alias(column)).write_parquet(path)
    code, out, err = run_cli("off-policy", path, "--target", "target")
    assert out == ""
    assert_refused(code, err, str(path), *fragments)


def test_missing_and_empty_files_are_refused(tmp_path: Path, logs_csv: Path) -> None:
    code, _, err = run_cli("off-policy", tmp_path / "nope.parquet", "--target", "target")
    assert_refused(code, err, "LOGS", "no such file")
    empty = tmp_path / "empty.csv"
    LOGS.head(0).write_csv(empty)
    code, _, err = run_cli("off-policy", empty, "--target", "target")
    assert_refused(code, err, "LOGS", "has no rows")
    code, _, err = run_cli("off-policy", logs_csv, "--recommendations", tmp_path / "recs.txt")
    assert_refused(code, err, "--recommendations", "recs.txt")


def test_an_empty_ranking_file_is_a_target_that_ranks_nothing(tmp_path: Path, logs_csv: Path) -> None:
    recs = tmp_path / "recs.parquet"
    RECS.head(0).write_parquet(recs)
    code, out, err = run_cli("off-policy", logs_csv, "--recommendations", recs, "--estimators", "ips", "--format", "csv")
    assert code == 0, err
    row = _csv(out)["ips"]
    assert (row["value"], row["supported"]) == (0.0, 0.0)


def test_the_output_may_not_overwrite_the_logs(logs_csv: Path) -> None:
    code, _, err = run_cli("off-policy", logs_csv, "--target", "target", "--out", logs_csv)
    assert_refused(code, err, "is the input file of LOGS")
