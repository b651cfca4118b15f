"""The ``recframe`` command: results equal the API's, bad input exits 2 in one line, --out is atomic.

Most tests run ``python -m recframe`` as a subprocess on files written to a temporary folder, as a
scheduler would; quick cases call :func:`recframe.cli.main` in-process.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import recframe
from conftest import assert_refused, run_cli
from recframe import RecframeError, cli
from recframe.conventions import CHOICES, TABLE

SRC = Path(recframe.__file__).resolve().parents[1]  # so the subprocess imports the code under test


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "recframe", *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd, timeout=120
    )


def assert_same(got: pl.DataFrame, expected: pl.DataFrame) -> None:
    assert_frame_equal(got, expected, check_dtypes=False, check_exact=False, rel_tol=0, abs_tol=1e-12)


def assert_usage_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("recframe: error: ")
    assert "Hint:" in lines[0]
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


# Two models ranking for three users. Hand check, model A, user 1: relevant (>= 4) items 10 and 12;
# A ranks 10 first, 12 third: precision@2 = 1/2, recall@2 = 1/2.
RECS = pl.DataFrame(
    {
        "model": ["A", "A", "A", "A", "A", "A", "B", "B", "B", "B", "B"],
        "user_id": [1, 1, 1, 2, 2, 3, 1, 1, 2, 2, 3],
        "item_id": [10, 11, 12, 20, 21, 30, 12, 10, 21, 22, 31],
        "rank": [1, 2, 3, 1, 2, 1, 1, 2, 1, 2, 1],
        "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.9, 0.95, 0.4, 0.8, 0.8, 0.3],
    }
)
TRUTH = pl.DataFrame(
    {
        "user_id": [1, 1, 1, 2, 2, 3],
        "item_id": [10, 12, 13, 22, 21, 30],
        "rating": [5, 4, 2, 4, 1, 3],
    }
)
OPTIONS = {"truth": TRUTH, "relevance": "rating", "threshold": 4, "by": "model", "k": [2, 3]}
FLAGS = ["--relevance", "rating", "--threshold", "4", "--by", "model", "--k", "2,3"]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("exports")
    (folder / "recs").mkdir()
    # a parquet export split in two parts, as warehouses write them, and the same as one CSV
    RECS.filter(pl.col("model") == "A").write_parquet(folder / "recs" / "part-0.parquet")
    RECS.filter(pl.col("model") == "B").write_parquet(folder / "recs" / "part-1.parquet")
    RECS.write_csv(folder / "recs.csv")
    TRUTH.write_parquet(folder / "truth.parquet")
    TRUTH.write_csv(folder / "truth.csv")
    # one long frame with ranks and relevance, relevant items not recommended included (rank
    # null), for runs without --truth
    joined = pl.concat(
        [
            RECS.filter(pl.col("model") == model)
            .drop("score", "model")
            .join(TRUTH, on=["user_id", "item_id"], how="full", coalesce=True)
            .select(pl.lit(model).alias("model"), "user_id", "item_id", "rank", "rating")
            for model in ("A", "B")
        ]
    )
    joined.write_csv(folder / "joined.csv")
    joined.filter(pl.col("model") == "A").drop("model").write_parquet(folder / "model_a.parquet")
    return folder


def test_users_and_exclude_files_equal_the_api(files, tmp_path):
    users = pl.DataFrame({"user_id": [1, 2, 3], "segment": ["warm", "warm", "cold"]})
    seen = pl.DataFrame({"user_id": [1, 2], "item_id": [11, 22], "timestamp": [5, 6]})
    users.write_csv(tmp_path / "users.csv")
    seen.write_parquet(tmp_path / "seen.parquet")
    result = run(
        "evaluate", files / "recs.csv", "--truth", files / "truth.csv", "--users", tmp_path / "users.csv",
        "--exclude", tmp_path / "seen.parquet", "--score", "score", *FLAGS[:4], "--k", "2,3", "--by", "model,segment", "--format", "csv",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    options = {**OPTIONS, "by": ["model", "segment"], "users": users, "exclude": seen}
    assert_same(pl.read_csv(io.StringIO(result.stdout)), recframe.summary(RECS.drop("rank"), score="score", **options))
    # a user the --users file does not list: exit 2 naming the option to pass
    users.filter(pl.col("user_id") != 3).write_csv(tmp_path / "two.csv")
    result = run(
        "evaluate",
        files / "recs.csv",
        "--truth",
        files / "truth.csv",
        "--users",
        tmp_path / "two.csv",
        "--score",
        "score",
        *FLAGS,
    )
    assert_usage_error(result, "user_id=3 has recommendations but is not in --users", "--unlisted-users drop")


def test_train_and_items_files_equal_the_api(files, tmp_path):
    train = pl.DataFrame({"user_id": [1, 2, 3, 4, 4], "item_id": [10, 10, 12, 20, 30], "rating": [5, 4, 3, 2, 1]})
    items = pl.DataFrame({"item_id": [10, 11, 12, 20, 21, 22, 30, 31], "genre": ["x", "y", "x", "z", "z", "y", "x", "y"]})
    train.write_parquet(tmp_path / "train.parquet")
    items.write_csv(tmp_path / "items.csv")
    metrics = "ndcg,novelty,long_tail,ild,intersection,catalog_coverage,gini,personalization"
    result = run(
        "evaluate", files / "recs.csv", "--truth", files / "truth.csv", "--train", tmp_path / "train.parquet",
        "--items", tmp_path / "items.csv", "--item-features", "genre", "--baseline", "A", "--head-share", "0.4",
        "--novelty", "surprisal", "--metrics", metrics, *FLAGS, "--format", "csv",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    options = {**OPTIONS, "train": train, "items": items, "item_features": ["genre"], "baseline": "A", "head_share": 0.4}
    want = recframe.summary(RECS.drop("score"), metrics=metrics.split(","), novelty="surprisal", **options)
    assert_same(pl.read_csv(io.StringIO(result.stdout)), want)
    # a list metric without its input: exit 2, naming the option
    result = run("evaluate", files / "recs.csv", "--truth", files / "truth.csv", "--metrics", "novelty", *FLAGS)
    assert_usage_error(result, "metric 'novelty' needs --train, which was not given")


def test_item_groups_and_calibration_files_equal_the_api(files, tmp_path):
    train = pl.DataFrame({"user_id": [1, 2, 3, 4, 4], "item_id": [10, 10, 12, 20, 30]})
    items = pl.DataFrame({"item_id": [10, 11, 12, 20, 21, 22, 30, 31], "genre": ["x", "y", "x", "z", "z", "y", "x", "y"]})
    train.write_parquet(tmp_path / "train.parquet")
    items.write_csv(tmp_path / "items.csv")
    sides = ["--train", tmp_path / "train.parquet", "--items", tmp_path / "items.csv", "--item-group", "genre"]
    options = {**OPTIONS, "train": train, "items": items, "item_group": "genre"}
    metrics = "miscalibration,calibration_js,pop_rsp,pop_reo,exposure_disparity"
    result = run(
        "evaluate", files / "recs.csv", "--truth", files / "truth.csv", *sides, "--calibration-weight", "rank",
        "--metrics", metrics, *FLAGS, "--format", "csv",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    want = recframe.summary(RECS.drop("score"), metrics=metrics.split(","), calibration_weight="rank", **options)
    assert_same(pl.read_csv(io.StringIO(result.stdout)), want)
    result = run("item-groups", files / "recs.csv", "--truth", files / "truth.csv", *sides, *FLAGS, "--format", "csv")
    assert result.returncode == 0, result.stderr
    assert_same(pl.read_csv(io.StringIO(result.stdout)), recframe.item_groups(RECS.drop("score"), **options))
    result = run("item-groups", files / "recs.csv", "--truth", files / "truth.csv", *sides[:4], *FLAGS)
    assert_usage_error(result, "needs --item-group: a column of --items")


def test_summary_csv_from_a_parquet_glob_equals_the_api(files):
    result = run("evaluate", files / "recs" / "*.parquet", "--truth", files / "truth.parquet", *FLAGS, "--format", "csv")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # piped: no progress
    got = pl.read_csv(io.StringIO(result.stdout))
    assert_same(got, recframe.summary(RECS, **OPTIONS))
    assert got.filter(pl.col("model") == "A")["precision@2"].item() == pytest.approx((1 / 2 + 0 / 2 + 0 / 2) / 2)


def test_per_user_json_from_csv_with_score_equals_the_api(files):
    result = run(
        "evaluate",
        files / "recs.csv",
        "--truth",
        files / "truth.csv",
        *FLAGS,
        "--score",
        "score",
        "--per-user",
        "--format",
        "json",
        "--empty-users",
        "zero",
    )
    assert result.returncode == 0, result.stderr
    got = pl.DataFrame(json.loads(result.stdout))
    expected = recframe.per_user(RECS, **OPTIONS, score="score", empty_users="zero")
    assert_same(got, expected)
    # model B, user 2: items 21 and 22 tie at 0.8, item 21 first; only 22 is relevant
    row = got.filter((pl.col("model") == "B") & (pl.col("user_id") == 2))
    assert row["rr@2"].item() == 1 / 2


def test_out_parquet_without_truth_and_without_by(files, tmp_path):
    out = tmp_path / "metrics.parquet"
    result = run(
        "evaluate", files / "model_a.parquet", "--relevance", "rating", "--k", "1,2", "--metrics", "precision,ndcg", "--out", out
    )
    assert result.returncode == 0, result.stderr
    # nothing on stdout; on stderr only the rule that made the 1-5 ratings relevant (no --threshold)
    assert result.stdout == "" and result.stderr.startswith("recframe: note: relevance: no --threshold")
    assert len(result.stderr.splitlines()) == 1
    expected = recframe.summary(
        pl.read_parquet(files / "model_a.parquet"), relevance="rating", k=[1, 2], metrics=["precision", "ndcg"]
    )
    assert_same(pl.read_parquet(out), expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.parquet"]  # no temporary file left


def test_in_process_formats_options_and_out_inference(files, tmp_path, capsys):
    out = tmp_path / "m.json"
    args = ["evaluate", str(files / "joined.csv"), "--relevance", "rating", "--threshold", "4", "--by", "model", "--quiet"]
    conventions = ["--ap-denominator", "relevant", "--gain", "exp2", "--precision-denominator", "retrieved"]
    assert cli.main([*args, *conventions, "--no-check-duplicates", "--out", str(out)]) == 0
    expected = recframe.summary(
        pl.read_csv(files / "joined.csv"),
        relevance="rating",
        threshold=4,
        by="model",
        ap_denominator="relevant",
        gain="exp2",
        precision_denominator="retrieved",
        check_duplicates=False,
    )
    assert_same(pl.DataFrame(json.loads(out.read_text())), expected)  # .json -> json
    capsys.readouterr()
    assert cli.main([*args, "--k", "2", "--metrics", "precision", "--precision", "3"]) == 0
    table = capsys.readouterr().out.splitlines()
    # model A: users 1 and 2 have relevant items; P@2 = (1/2 + 0/2) / 2 = 0.25; user 3 skipped
    assert table[1].split() == [
        "│", "model", "┆", "n_users", "┆", "n_skipped", "┆", "n_unranked", "┆", "n_no_relevant", "┆", "n_no_truth", "┆", "precision@2", "│",
    ]  # fmt: skip
    # user 3 has no relevant item: skipped, counted in n_no_relevant
    assert table[3].split() == ["│", "A", "┆", "2", "┆", "1", "┆", "0", "┆", "1", "┆", "0", "┆", "0.250", "│"]
    assert cli.main([*args, "--k", "2", "--metrics", "precision", "--format", "markdown"]) == 0
    assert "| A     | 2       | 1         | 0          | 1             | 0          | 0.2500      |" in capsys.readouterr().out


def test_q_is_per_user_as_trec_eval_and_quiet_has_its_long_form_only(files, capsys):
    """-q means per query (trec_eval's -q): evaluate's --per-user; --quiet keeps its long form."""
    args = ["evaluate", str(files / "joined.csv"), "--relevance", "rating", "--by", "model", "--format", "csv"]
    assert cli.main([*args, "--per-user"]) == 0
    per_user = capsys.readouterr().out
    assert cli.main([*args, "-q", "--quiet"]) == 0
    assert capsys.readouterr().out == per_user and per_user.startswith("model,user_id,")
    assert cli.main(["curve", str(files / "joined.csv"), "--relevance", "rating", "-q"]) == 2
    assert "-q means per query" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["evaluate", "missing.parquet"], ["missing.parquet", "no such file"]),
        (
            ["evaluate", "recs.csv", "--truth", "truth.csv", "--relevance", "grade"],
            ["'grade'", "truth.csv", "--relevance rating"],
        ),
        (["evaluate", "joined.csv", "--k", "0"], ["--k", "--k 0 must be >= 1"]),
        (["evaluate", "joined.csv", "--k", "a"], ["--k", "'a' is not a whole number"]),
        (["evaluate", "ragged.csv", "--relevance", "rating"], ["ragged.csv, line 3: 6 field(s) where the header has 4"]),
        (
            ["evaluate", "truncated.csv", "--relevance", "rating"],
            ["truncated.csv, line 3: 3 field(s) where the header has 4", "half-written"],
        ),
        (["evaluate", "empty.csv"], ["empty.csv", "could not be read"]),
        (["evaluate", "empty.parquet"], ["empty.parquet", "could not be read"]),
        (["evaluate", "joined.csv", "--k", "5,,10"], ["--k", "empty cut-off"]),
        (["evaluate", "joined.csv", "--by", ""], ["--by", "'' has an empty column name"]),
        (["evaluate", "joined.csv", "--precision", "100000000000000000000"], ["--precision", "from 0 to 17"]),
        (["evaluate", "joined.csv", "--out", "joined.csv"], ["--out 'joined.csv' is the input file of RECS"]),
        (["evaluate", "joined.csv", "--out", "."], ["--out '.' is a folder"]),
    ],
    ids=[
        "missing-file",
        "missing-column",
        "k-zero",
        "k-not-a-number",
        "malformed-csv",
        "truncated-csv",
        "empty-csv",
        "empty-parquet",
        "k-empty-part",
        "by-empty",
        "huge-precision",
        "out-is-input",
        "out-is-folder",
    ],
)
def test_bad_input_exits_2_with_one_line(files, args, fragments):
    (files / "ragged.csv").write_text("user_id,item_id,rank,rating\n1,10,1,5\n1,11,2,4,9,9\n")
    (files / "truncated.csv").write_text("user_id,item_id,rank,rating\n1,10,1,5\n2,11,2\n")
    (files / "empty.csv").write_text("")
    (files / "empty.parquet").write_bytes(b"")
    before = (files / "joined.csv").read_bytes()
    assert_usage_error(run(*args, cwd=files), *fragments)
    assert (files / "joined.csv").read_bytes() == before  # no input overwritten


def test_an_empty_export_fails_the_job_instead_of_writing_empty_metrics(files, tmp_path):
    """A RECS or --truth file with no rows (a header-only CSV, a parquet export of no row, a glob
    of such parts) is a failed export: exit 2 naming it, and no output file, where the metrics
    were an empty table (or nulls) with exit 0. An empty --exclude is a real case and is read."""
    folder = tmp_path / "empty_parts"
    folder.mkdir()
    for i in range(2):
        RECS.head(0).write_parquet(folder / f"part-{i}.parquet")
    RECS.head(0).write_csv(tmp_path / "header_only.csv")
    TRUTH.head(0).write_parquet(tmp_path / "no_truth.parquet")
    out = tmp_path / "metrics.csv"
    for args, named in (
        ([f"{folder}/*.parquet", "--score", "score"], "RECS '"),
        ([tmp_path / "header_only.csv", "--score", "score"], "header_only.csv' has no rows (1 csv file)"),
        ([files / "recs.csv", "--score", "score", "--truth", tmp_path / "no_truth.parquet"], "--truth '"),
    ):
        result = run("evaluate", *args, "--relevance", "rating", "--threshold", "4", "--by", "model", "--out", out)
        assert_usage_error(result, named, "has no rows", "nothing to evaluate")
        assert not out.exists()
    result = run("cohorts", tmp_path / "header_only.csv", "--train", files / "truth.csv")
    assert_usage_error(result, "RECS '", "has no rows")
    # (parquet: typed, where a header-only CSV reads as text)
    TRUTH.head(0).select("user_id", "item_id").write_parquet(tmp_path / "seen.parquet")
    flags = ["--relevance", "rating", "--threshold", "4", "--by", "model", "--exclude", tmp_path / "seen.parquet"]
    ok = run("evaluate", files / "joined.csv", *flags)
    assert ok.returncode == 0, ok.stderr


def test_a_quoted_line_break_is_one_record_rfc_4180(tmp_path):
    """A field holding a line break (quoted, as RFC 4180 allows) is read, not refused as ragged;
    a short row after it is still named by its own line, and an unclosed quote is refused."""
    header = "user_id,item_id,rank,relevance,note\n"
    good = tmp_path / "good.csv"
    good.write_text(header + '1,a,1,1,"two\nlines, and a comma"\n1,b,2,0,plain\n')
    code, out, _ = run_cli("evaluate", good, "--k", "2", "--metrics", "precision,recall", "--format", "csv", "--quiet")
    assert code == 0 and out.splitlines()[1].endswith(",0.5,1.0")  # a@1 relevant: precision@2 1/2, recall 1/1
    ragged = tmp_path / "ragged.csv"
    ragged.write_text(header + '1,a,1,1,"two\nlines"\n1,b,2\n')
    assert_usage_error(run("evaluate", ragged), "ragged.csv, line 4: 3 field(s) where the header has 5")
    unclosed = tmp_path / "unclosed.csv"
    unclosed.write_text(header + '1,a,1,1,"open\n1,b,2,0,x\n')
    assert_usage_error(run("evaluate", unclosed), "unclosed.csv, line 2: a quoted field opens here and is never closed")


@pytest.mark.parametrize("lines", [1, 2, 3])
def test_stray_quotes_in_a_csv_are_a_usage_error_naming_the_line(tmp_path: Path, lines: int) -> None:
    path = tmp_path / "quotes.csv"
    path.write_text("model,user_id,item_id,rank,relevance\n" + 'A,1,""x",1,1\n' * lines)
    code, out, err = run_cli("evaluate", path, "--k", "1")
    assert_refused(code, err, "quotes.csv, line 2" if lines < 3 else "quotes.csv, line ")
    assert out == ""


def test_well_quoted_csv_fields_still_read(tmp_path: Path) -> None:
    path = tmp_path / "quoted.csv"
    path.write_text('model,user_id,item_id,rank,relevance\nA,1,"x, y",1,1\nA,2,"multi\nline",1,1\nA,3,"a ""q"" b",1,1\n')
    code, out, err = run_cli("evaluate", path, "--k", "1", "--format", "csv", "--quiet")
    assert code == 0, err
    assert out.splitlines()[1].startswith("3,")  # n_users: three users, each with its item


def test_failing_run_leaves_no_file_and_keeps_the_old_one(files, tmp_path):
    good = tmp_path / "metrics.csv"
    good.write_text("yesterday's good result\n")
    result = run("evaluate", files / "joined.csv", "--relevance", "no_such_column", "--out", good)
    assert_usage_error(result, "no_such_column", "(the --relevance argument)", "joined.csv")
    assert good.read_text() == "yesterday's good result\n"
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.csv"]
    # data errors surface while the streaming engine runs: still nothing written
    duplicated = tmp_path / "dup.csv"
    pl.concat([pl.read_csv(files / "joined.csv")] * 2).write_csv(duplicated)
    new = tmp_path / "new.csv"
    assert cli.main(["evaluate", str(duplicated), "--relevance", "rating", "--by", "model", "--out", str(new)]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dup.csv", "metrics.csv"]


def test_write_atomic_removes_the_temporary_file_on_failure(tmp_path):
    target = tmp_path / "out.csv"

    def half_write(path: Path) -> None:
        path.write_text("half")
        raise OSError("disk full")

    with pytest.raises(cli.UsageError, match=r"--out .*out\.csv': could not write it \(disk full\)"):
        cli.write_atomic(target, half_write)
    assert list(tmp_path.iterdir()) == []
    cli.write_atomic(target, lambda path: path.write_text("whole"))
    assert target.read_text() == "whole"
    assert oct(target.stat().st_mode & 0o777) != oct(0o600)  # a plain file's permissions, not the temp's


def test_usage_errors_in_process(files, tmp_path, capsys):
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    RECS.write_csv(mixed / "a.csv")
    RECS.write_parquet(mixed / "b.parquet")
    (tmp_path / "notes.txt").write_text("x")
    cases = [
        (["evaluate", str(mixed / "*.*")], "both parquet and CSV"),
        (["evaluate", str(tmp_path / "*.txt")], "reads .parquet and .csv files"),
        (["evaluate", str(mixed / "nothing-*.csv")], "no file matches"),
        (["evaluate", str(mixed)], "is a folder"),
        (["evaluate", str(mixed / "a.csv"), "--format", "parquet"], "--out FILE.parquet"),
        (["evaluate", str(mixed / "a.csv"), "--out", str(tmp_path / "nowhere" / "m.csv")], "does not exist"),
        (["evaluate", str(mixed / "a.csv"), "--out", str(tmp_path / "m.xlsx")], "--format csv"),
        (["evaluate", str(mixed / "a.csv"), "--metrics", "ndgc"], 'did you mean "ndcg"'),
        (["evaluate", str(mixed / "a.csv"), str(mixed / "b.parquet")], "quote globs"),
        (["evaluate", str(mixed / "a.csv"), "--gain", "exp"], "invalid choice"),
        (["evaluate", str(mixed / "a.csv"), "--rank", "position"], "(the --rank argument)"),
    ]
    for args, fragment in cases:
        assert cli.main(args) == 2, args
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("recframe: error: ") and "Hint:" in err, err
        assert fragment in err, (fragment, err)


def test_unexpected_failure_exits_1_and_points_to_debug(files, monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise RuntimeError("engine exploded\nsecond line")

    monkeypatch.setattr(recframe, "summary", broken)
    args = ["evaluate", str(files / "joined.csv"), "--relevance", "rating"]
    assert cli.main(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "RuntimeError: engine exploded" in err and "--debug" in err
    assert "Traceback" not in err
    assert cli.main([*args, "--debug"]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_demo_exits_0_and_prints_the_summary_by_model():
    result = run("demo")
    assert result.returncode == 0, result.stderr
    assert "personal" in result.stdout and "popular" in result.stdout and "ndcg@10" in result.stdout


def test_schema_shows_columns_and_the_mapping(files):
    result = run("schema", files / "recs.csv", "--truth", files / "truth.csv")
    # truth has "rating", not "relevance": the report says so, then evaluate's error, exit 2
    assert result.returncode == 2
    lines = result.stdout.splitlines()
    assert lines[0].startswith("RECS: ") and "(1 csv file)" in lines[0]
    assert lines[2].split() == ["model", "String", "-"]
    assert lines[3].split() == ["user_id", "Int64", "user"]
    assert lines[5].split() == ["rank", "Int64", "rank"]
    assert "hint: TRUTH has no 'relevance' column: pass --relevance COLUMN (maybe --relevance rating)." in lines
    assert "hint: to compare groups (models, variants), pass --by model." in lines
    assert result.stderr.count("\n") == 1 and "--relevance rating" in result.stderr
    ok = cli.main(
        ["schema", str(files / "recs.csv"), "--truth", str(files / "truth.csv"), "--relevance", "rating", "--score", "score"]
    )
    assert ok == 0


def test_schema_suggests_score_when_there_is_no_rank(tmp_path, capsys):
    path = tmp_path / "scored.parquet"
    RECS.drop("rank").rename({"score": "prediction"}).with_columns(relevance=pl.lit(1)).write_parquet(path)
    assert cli.main(["schema", str(path)]) == 2
    out = capsys.readouterr().out
    assert "hint: RECS has no 'rank' column: pass --rank COLUMN or --score COLUMN (maybe --score prediction)." in out


def test_every_convention_option_is_a_flag_and_new_ones_flow_in(monkeypatch):
    parser = cli.build_parser()
    evaluate = next(a for a in parser._subparsers._group_actions[0].choices.values() if a.prog.endswith("evaluate"))
    options = {action.dest: action for action in evaluate._actions}
    for name, values in CHOICES.items():
        if TABLE[name].kind is float:  # a number (checked by the API), not a choice
            assert options[name].choices is None and options[name].type is float
        else:
            assert tuple(options[name].choices) == values
        assert options[name].default is None  # only given options reach the API
    monkeypatch.setitem(CHOICES, "future_option", ("a", "b"))
    args = cli.build_parser().parse_args(["evaluate", "x.csv", "--future-option", "b"])
    assert args.future_option == "b"


def test_profile_and_boolean_conventions_reach_the_api(files, tmp_path):
    out = tmp_path / "m.csv"
    args = ["evaluate", str(files / "joined.csv"), "--relevance", "rating", "--threshold", "4", "--by", "model", "--k", "2"]
    assert cli.main([*args, "--profile", "trec_eval", "--rr-cutoff", "false", "--out", str(out)]) == 0
    expected = recframe.summary(
        pl.read_csv(files / "joined.csv"),
        relevance="rating",
        threshold=4,
        by="model",
        k=2,
        profile="trec_eval",
        rr_cutoff=False,
    )
    assert_same(pl.read_csv(out), expected)
    assert cli.main([*args, "--rr-cutoff", "maybe"]) == 2


def progress_enabled(stream: io.StringIO, quiet: bool) -> bool:
    return cli.Progress.for_stream(stream, quiet).enabled


def test_progress_only_on_a_terminal_and_not_when_quiet():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert progress_enabled(Terminal(), quiet=False)
    assert not progress_enabled(Terminal(), quiet=True)
    assert not progress_enabled(io.StringIO(), quiet=False)
    stream = Terminal()
    progress = cli.Progress(stream, interval=0.01)
    progress.stage("recs: 3 files")
    with progress.running("reading and evaluating"):
        time.sleep(0.05)
    text = stream.getvalue()
    assert text.startswith("recframe: recs: 3 files\n")
    assert "\rrecframe: reading and evaluating " in text  # the spinner ticked
    assert text.endswith(" s\n") and "reading and evaluating: " in text


def test_api_errors_are_said_in_command_line_words_from_their_fields():
    from recframe.errors import fix, ref

    error = RecframeError(f"{ref('gain', 'exp')} is bad.", f"pass {fix('score_threshold', 2.0)} or {fix('empty_users', 'zero')}.")
    assert (error.argument, error.value, error.hint) == ("gain", "exp", 'pass score_threshold=2.0 or empty_users="zero".')
    assert str(error) == "gain='exp' is bad. Hint: pass score_threshold=2.0 or empty_users=\"zero\"."
    assert cli.cli_words(error) == "--gain exp is bad. Hint: pass --score-threshold 2.0 or --empty-users zero."
    assert (
        cli.cli_words(RecframeError(f"x. Hint: pass {fix('check_duplicates', False)}.")) == "x. Hint: pass --no-check-duplicates."
    )
    # text that is not an argument reference is never rewritten: "user=1" is a column and a value
    assert cli.cli_words(RecframeError("user=1 has 2 rows. Hint: x")) == "user=1 has 2 rows. Hint: x"
    # the API's own errors carry their argument: a bad k from the API is said as the option
    with pytest.raises(RecframeError) as caught:
        recframe.summary(RECS, k=0)
    assert caught.value.argument == "k" and caught.value.value == 0
    assert cli.cli_words(caught.value).startswith("--k 0 must be >= 1. Hint: k is the length of the list cut, e.g. --k 10.")


def test_errors_keep_their_fields_through_pickle():
    import pickle

    with pytest.raises(RecframeError) as caught:
        recframe.summary(RECS, relevance="grade")
    again = pickle.loads(pickle.dumps(caught.value))
    assert str(again) == str(caught.value) and again.argument == "relevance" and again.parts == caught.value.parts


GOOD_CSV = "user_id,item_id,rank,rating\n1,10,1,5\n1,11,2,3\n2,10,1,4\n2,12,,5\n"


@settings(max_examples=30, deadline=None)
@given(
    mutation=st.sampled_from(
        ["short-row", "long-row", "text-rank", "cut-mid-line", "empty", "garbage-parquet", "header-only-rank"]
    ),
    line=st.integers(1, 4),
)
def test_malformed_files_exit_2_with_one_line_and_no_output(tmp_path_factory, mutation, line):
    """The CLI half of the adversarial suite: whatever is wrong with a file, exit 2, exactly one
    line on stderr naming the file, and no output file."""
    folder = tmp_path_factory.mktemp("bad")
    lines = GOOD_CSV.splitlines()
    name = "recs.parquet" if mutation == "garbage-parquet" else "recs.csv"
    if mutation == "short-row":
        lines[line] = lines[line].rsplit(",", 1)[0]
    elif mutation == "long-row":
        lines[line] += ",7"
    elif mutation == "text-rank":
        parts = lines[line].split(",")
        lines[line] = ",".join([parts[0], parts[1], "first", parts[3]])
    text = "\n".join(lines) + "\n"
    if mutation == "cut-mid-line":
        text = text[: len(text) - 3]  # the export stopped inside the last row
    elif mutation == "empty":
        text = ""
    elif mutation == "header-only-rank":
        text = "user_id,item_id,rank,rating\n"
    path = folder / name
    if mutation == "garbage-parquet":
        path.write_bytes(b"PAR1 not really parquet" * line)
    else:
        path.write_text(text)
    out = folder / "metrics.csv"
    code, _, err = run_cli("evaluate", path, "--relevance", "rating", "--threshold", "4", "--out", out, "--quiet")
    lines_out = err.splitlines()
    assert code == 2, (mutation, err)
    assert len(lines_out) == 1 and lines_out[0].startswith("recframe: error: ") and name in lines_out[0], lines_out
    assert not out.exists()


def test_a_failed_write_is_blamed_on_the_output(files, tmp_path, monkeypatch):
    def full(path: Path) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", lambda self, path: full(path))
    code, _, err = run_cli(
        "evaluate", files / "joined.csv", "--relevance", "rating", "--by", "model", "--out", tmp_path / "m.parquet", "--quiet"
    )
    assert code == 2
    assert "--out" in err and "No space left on device" in err and "joined.csv" not in err
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind


def test_reporting_commands_equal_the_api(files, tmp_path):
    """evaluate --ci, compare, curve (and --plot) and report give what the API gives."""
    flags = [
        "--truth",
        str(files / "truth.parquet"),
        "--relevance",
        "rating",
        "--threshold",
        "4",
        "--by",
        "model",
        "--score",
        "score",
    ]
    recs = str(files / "recs" / "*.parquet")
    options = {**OPTIONS, "k": [2], "metrics": ["ndcg", "recall"]}
    got = run("evaluate", recs, *flags, "--k", "2", "--metrics", "ndcg,recall", "--ci", "0.9", "--seed", "3", "--format", "csv")
    assert got.returncode == 0, got.stderr
    assert_same(
        pl.read_csv(io.StringIO(got.stdout)), recframe.summary(RECS.drop("rank"), score="score", ci=0.9, seed=3, **options)
    )

    got = run(
        "compare",
        recs,
        *flags,
        "--k",
        "2",
        "--metrics",
        "ndcg,recall",
        "--baseline",
        "A",
        "--test",
        "randomization",
        "--seed",
        "1",
        "--format",
        "csv",
    )
    assert got.returncode == 0, got.stderr
    per_user = recframe.per_user(RECS.drop("rank"), score="score", **options)
    want = recframe.compare(per_user, by="model", baseline="A", test="randomization", seed=1)
    assert_same(pl.read_csv(io.StringIO(got.stdout)).select(want.columns[3:-1]), want.select(want.columns[3:-1]))

    pytest.importorskip("matplotlib", reason="--plot needs matplotlib")
    png = tmp_path / "curve.png"
    got = run("curve", recs, *flags, "--k-max", "3", "--metrics", "ndcg", "--plot", png, "--format", "csv")
    assert got.returncode == 0, got.stderr
    want = recframe.curve(
        RECS.drop("rank"), score="score", metrics=["ndcg"], k_max=3, **{k: v for k, v in OPTIONS.items() if k != "k"}
    )
    assert_same(pl.read_csv(io.StringIO(got.stdout)), want)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    html = tmp_path / "report.html"
    got = run("report", recs, *flags, "--k", "2", "--metrics", "ndcg", "--baseline", "A", "--format", "html", "--out", html)
    assert got.returncode == 0, got.stderr
    summary = recframe.summary(RECS.drop("rank"), score="score", **{**options, "metrics": ["ndcg"]})
    comparison = recframe.compare(
        recframe.per_user(RECS.drop("rank"), score="score", **{**options, "metrics": ["ndcg"]}), baseline="A"
    )
    assert html.read_text() == recframe.report(summary, format="html", precision=3, compare=comparison).rstrip("\n") + "\n"


def test_reporting_usage_errors(files):
    recs = str(files / "recs" / "*.parquet")
    flags = ["--truth", str(files / "truth.parquet"), "--relevance", "rating", "--score", "score"]
    assert_usage_error(run("compare", recs, *flags, "--baseline", "A"), "compare needs the model column", "--by model")
    assert_usage_error(run("evaluate", recs, *flags, "--per-user", "--ci", "0.95"), "--per-user has no means")
    assert_usage_error(
        run("compare", recs, *flags, "--by", "model", "--baseline", "Z"), "--baseline Z is not a value of column 'model'"
    )
    # no list judged: every list is skipped, which is what to say (it once said the baseline was
    # not among the models, "values: []")
    unjudged = files / "unjudged.parquet"
    pl.read_csv(files / "joined.csv").with_columns(pl.lit(None, pl.Float64).alias("rating")).write_parquet(unjudged)
    assert_usage_error(
        run("compare", unjudged, "--relevance", "rating", "--by", "model", "--baseline", "A"),
        "per_user_frame has no row to compare",
        "--empty-users skip",
        "n_no_truth",
    )


def test_a_wide_table_is_transposed_to_fit_the_terminal():
    table = recframe.summary(RECS.drop("rank"), score="score", **{**OPTIONS, "k": [1, 2, 3]})
    narrow = cli.render(table, "table", 4, width=80)
    assert max(len(line) for line in narrow.splitlines()) <= 80
    assert "ndcg@3" in narrow and "│         model ┆      A ┆      B │" in narrow  # a row per metric, a column per model
    assert cli.render(table, "table", 4, width=None) == cli.render(table, "table", 4, width=100)  # not a terminal: 100


def test_terminal_tables_fit_100_columns_and_keep_each_value_readable(tmp_path):
    """Where the output is not a terminal (a pipe, a log), demo, evaluate and compare print no
    line wider than 100 characters: a wide table turns to metrics as rows, models as columns;
    counts stay integers, a significance is yes/no, a tiny p-value reads "< 0.0001", and a
    comparison's column says what it compares."""
    recs, truth = SRC / "recframe" / "data" / "recs.csv", SRC / "recframe" / "data" / "truth.csv"
    flags = ["--truth", truth, "--relevance", "rating", "--threshold", "4", "--by", "model", "--quiet"]
    for args in (["demo"], ["evaluate", recs, *flags], ["compare", recs, *flags, "--baseline", "popular", "--metrics", "ndcg"]):
        result = run(*args)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert max(len(line) for line in lines) <= 100, args[0]
        table = "\n".join(line for line in lines if line.startswith(("│", "┌", "╞", "└")))
        if args[0] != "compare":
            assert "n_users ┆      287 ┆     287 │" in table, table  # counts are integers
    # the comparison: one column, named by what it compares
    assert "┆ personal vs popular │" in table and "popular personal" not in table
    assert "n_pairs ┆                 287 │" in table and "p_value ┆            < 0.0001 │" in table
    assert "significant ┆                 yes │" in table
