"""The command line's messages (issue 58): exit codes that blame the input only when it is at
fault, messages in the command line's words, the help of each subcommand about itself."""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl
import pytest

import recframe
from conftest import run_cli

DATA = Path(__file__).parent / "data" / "trec_eval"
TREC = ["evaluate", "--qrels", str(DATA / "qrels.test"), "--run", str(DATA / "results.test"), "--format", "trec", "--quiet"]


# ---------------------------------------------------------------------------- item 14: exit codes


@pytest.mark.parametrize(("given", "printed"), [("set_P.5", "set_P"), ("map.5", "map"), ("num_q.3", "num_q")])
def test_a_measure_without_parameters_ignores_those_given_as_trec_eval(given: str, printed: str) -> None:
    """trec_eval's te_init_meas_s_float (and kin) ignore parameters: -m set_P.5 prints set_P.
    The drop-in looked up a column "set_P_5" and failed (exit 2, blaming the files)."""
    code, plain, err = run_cli(*TREC, "-m", printed)
    assert code == 0, err
    code, text, err = run_cli(*TREC, "-m", given)
    assert (code, err) == (0, "")
    assert text == plain and text.startswith(f"{printed} ")


def test_a_polars_error_on_files_that_read_is_a_defect_exit_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Polars error raised by recframe's own code on good files is not bad input: exit 1,
    "a bug in recframe", never "check that the files are well-formed" (exit 2)."""
    from recframe import trec_eval

    def broken(self: object, *args: object, **kwargs: object) -> object:
        raise pl.exceptions.ColumnNotFoundError('"set_P_5" not found')

    monkeypatch.setattr(trec_eval, "evaluate", broken)
    code, out, err = run_cli(*TREC, "-m", "set_P")
    assert code == 1 and out == ""
    assert err.startswith('recframe: error: unexpected ColumnNotFoundError: "set_P_5" not found')
    assert "bug in recframe" in err and "well-formed" not in err and len(err.splitlines()) == 1


def test_a_polars_error_of_the_evaluation_on_csv_files_that_read_is_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recs = tmp_path / "recs.csv"
    pl.DataFrame({"user_id": [1, 1], "item_id": [1, 2], "rank": [1, 2], "relevance": [1, 0]}).write_csv(recs)

    def broken(*args: object, **kwargs: object) -> object:
        raise pl.exceptions.InvalidOperationError("a cast recframe should not have made")

    monkeypatch.setattr(recframe, "summary", broken)
    code, _, err = run_cli("evaluate", str(recs), "--quiet")
    assert code == 1 and "unexpected InvalidOperationError" in err and "bug in recframe" in err


def test_a_csv_that_does_not_parse_past_the_inferred_rows_is_exit_2_naming_it(tmp_path: Path) -> None:
    """The input at fault: the file does not read on its own (a text rank after 10,000 numbers,
    found only while evaluating): exit 2, one line naming the file and Polars' words."""
    recs = tmp_path / "recs.csv"
    rows = "".join(f"{u},{u},1,1\n" for u in range(20_000))
    recs.write_text("user_id,item_id,rank,relevance\n" + rows + "20000,1,first,1\n")
    code, out, err = run_cli("evaluate", str(recs), "--quiet")
    assert code == 2 and out == ""
    assert err.startswith(f"recframe: error: could not read RECS {recs}: could not parse `first`")
    assert "Hint: check that the files are well-formed" in err and len(err.splitlines()) == 1


# ---------------------------------------------------------------------------- item 16: a missing --by


def test_two_models_without_by_name_the_flag(tmp_path: Path) -> None:
    recs = tmp_path / "recs.csv"
    pl.DataFrame(
        {
            "model": ["a", "a", "b", "b"],
            "user_id": [1, 1, 1, 1],
            "item_id": [1, 2, 1, 2],
            "rank": [1, 2, 1, 2],
            "relevance": [1, 0, 0, 1],
        }
    ).write_csv(recs)
    code, out, err = run_cli("evaluate", str(recs), "--quiet")
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "differ in column 'model'" in err and "Hint: did you mean --by model?" in err and "df.unique" not in err


# ---------------------------------------------------------------------------- item 17: scores without --score


def test_a_scored_file_without_rank_is_told_to_pass_score(tmp_path: Path) -> None:
    recs = tmp_path / "recs.csv"
    pl.DataFrame({"user_id": [1, 1], "item_id": [1, 2], "score": [0.9, 0.8], "relevance": [1, 0]}).write_csv(recs)
    code, _, err = run_cli("evaluate", str(recs), "--quiet")
    assert code == 2 and err.rstrip().endswith("Hint: pass --score score to rank by that score, highest first.")
    code, out, err = run_cli("evaluate", str(recs), "--quiet", "--score", "score", "--k", "1", "--metrics", "precision")
    assert code == 0 and "1.0" in out, err


# ---------------------------------------------------------------------------- item 19: the relevance rule


def _graded(tmp_path: Path, grades: list[int]) -> Path:
    recs = tmp_path / "recs.csv"
    n = len(grades)
    pl.DataFrame({"user_id": [1] * n, "item_id": list(range(n)), "rank": list(range(1, n + 1)), "rating": grades}).write_csv(recs)
    return recs


def test_ratings_without_threshold_say_the_rule_on_one_line(tmp_path: Path) -> None:
    recs = _graded(tmp_path, [1, 5, 3, 2])
    code, out, err = run_cli("evaluate", str(recs), "--relevance", "rating", "--k", "2", "--metrics", "precision", "--quiet")
    assert code == 0 and "1.0" in out  # both of the top 2 are rated > 0: precision@2 = 2/2
    assert err == (
        "recframe: note: relevance: no --threshold, so every item with rating > 0 counted as relevant, and 'rating' "
        "holds more than two values (from 1 to 5); pass --threshold T to count only rating >= T\n"
    )
    # with --threshold, or with two values (0/1 labels), nothing to say
    assert run_cli("evaluate", str(recs), "--relevance", "rating", "--threshold", "4", "--quiet")[2] == ""
    binary = _graded(tmp_path, [0, 1, 1, 0])
    assert run_cli("evaluate", str(binary), "--relevance", "rating", "--quiet")[2] == ""


def test_the_rule_is_read_from_the_truth_when_given(tmp_path: Path) -> None:
    recs = tmp_path / "recs.csv"
    pl.DataFrame({"user_id": [1, 1], "item_id": [1, 2], "rank": [1, 2]}).write_csv(recs)
    truth = tmp_path / "truth.csv"
    pl.DataFrame({"user_id": [1, 1, 1], "item_id": [1, 2, 3], "rating": [0, 2, 4]}).write_csv(truth)
    for command in ("evaluate", "curve", "per-item"):
        code, _, err = run_cli(command, str(recs), "--truth", str(truth), "--relevance", "rating", "--quiet")
        assert code == 0 and "'rating' holds more than two values (from 0 to 4)" in err, (command, err)


# ---------------------------------------------------------------------------- item 20: the help

COMMANDS = ["evaluate", "compare", "disparity", "item-groups", "per-item", "agreement", "cohorts", "curve", "report"]
COMMANDS += ["inspect", "off-policy", "demo", "schema"]


def help_of(command: str) -> str:
    code, out, err = run_cli(command, "--help")
    assert code == 0 and err == ""
    return out


@pytest.mark.parametrize("command", COMMANDS)
def test_each_subcommands_help_is_about_itself(command: str) -> None:
    text = help_of(command)
    assert "evaluate's --per-user" not in text  # the old --quiet line of every subcommand
    assert ("-q is --per-user" in text) == (command == "evaluate")
    assert "True,False" not in text and "{True" not in text
    assert text.count("\n") < 240  # evaluate's was 266 lines, 43 of them its usage
    description = text.split("\n\n")[1]
    assert not description.startswith(("options:", "positional", "run:")), text[:300]  # demo had none


def test_evaluate_groups_its_options() -> None:
    text = help_of("evaluate")
    groups = [
        "run:",
        "inputs (parquet or CSV files",
        "what is computed, and what counts as relevant:",
        "columns (",
        "conventions (",
    ]
    assert all(f"\n{group}" in text for group in groups), text
    assert text.startswith("usage: recframe evaluate RECS [--truth TRUTH] [options]\n")


def test_yes_no_conventions_read_on_and_off_and_the_old_true_false(tmp_path: Path) -> None:
    assert "--rr-cutoff {on,off}" in help_of("evaluate")
    recs = tmp_path / "recs.csv"
    pl.DataFrame({"user_id": [1, 1, 1], "item_id": [1, 2, 3], "rank": [1, 2, 3], "relevance": [0, 0, 1]}).write_csv(recs)
    args = ["evaluate", str(recs), "--k", "1", "--metrics", "rr", "--format", "csv", "--quiet"]
    # the first hit at rank 3: rr@1 is 0 with the cut-off on, 1/3 with it off
    on, off, old_off = (run_cli(*args, "--rr-cutoff", value) for value in ("on", "off", "false"))
    assert on[0] == off[0] == old_off[0] == 0
    assert pl.read_csv(io.StringIO(on[1]))["rr@1"].item() == 0.0
    assert pl.read_csv(io.StringIO(off[1]))["rr@1"].item() == pytest.approx(1 / 3)
    assert off[1] == old_off[1]
    code, _, err = run_cli(*args, "--rr-cutoff", "maybe")
    assert code == 2 and "'maybe' is not on or off" in err
    # an API error that names the option says it in the same words
    from recframe.cli._messages import words
    from recframe.errors import RecframeError, fix

    assert RecframeError("x.", f"pass {fix('rr_cutoff', False)}.").say(words) == "x. Hint: pass --rr-cutoff off."


def test_report_names_the_table_fragment_table_html_and_still_reads_html(tmp_path: Path) -> None:
    assert "table-html: the report table alone, an HTML fragment" in " ".join(help_of("report").split())
    recs = tmp_path / "recs.csv"
    pl.DataFrame({"user_id": [1, 1], "item_id": [1, 2], "rank": [1, 2], "relevance": [1, 0]}).write_csv(recs)
    args = ["report", str(recs), "--k", "2", "--metrics", "precision", "--quiet"]
    code, table, err = run_cli(*args, "--format", "table-html")
    assert code == 0 and err == "" and table.startswith("<table>")
    code, old, err = run_cli(*args, "--format", "html")
    assert code == 0 and old == table
    assert err.startswith("recframe: note: --format html writes the report table alone, an HTML fragment, now called")


def test_the_data_module_lists_its_loaders_only() -> None:
    import recframe.data

    assert dir(recframe.data) == ["HERE", "Workflow", "load_sample", "load_workflow"]
    assert recframe.data.__all__ == ["HERE", "Workflow", "load_sample", "load_workflow"]


# ---------------------------------------------------------------------------- item 21: rbp's rescaling


def test_rbp_rescales_grades_0_to_3_by_the_highest_as_docs_ir_says(tmp_path: Path) -> None:
    """docs/ir.md's worked example: high = 3, each gain grade / 3, p = 0.9."""
    qrels, run = tmp_path / "q.qrels", tmp_path / "r.run"
    qrels.write_text("1 0 d1 3\n1 0 d2 1\n1 0 d3 0\n1 0 d4 2\n")
    run.write_text("1 Q0 d2 1 4.0 r\n1 Q0 d3 2 3.0 r\n1 Q0 d1 3 2.0 r\n1 Q0 d4 4 1.0 r\n")
    args = ["evaluate", "--run", str(run), "--qrels", str(qrels), "--format", "trec", "--precision", "10", "--quiet"]
    code, out, err = run_cli(*args, "-m", "rbp")
    assert code == 0, err
    expected = 0.1 * (1 / 3 + 0.9**2 * 1 + 0.9**3 * 2 / 3)
    assert float(out.split()[-1]) == pytest.approx(expected, abs=1e-10)
    # 0/1 grades: nothing rescaled, 0.1 * (0.9**0 + 0.9**2)
    qrels.write_text("1 0 d1 1\n1 0 d2 1\n1 0 d3 0\n")
    code, out, _ = run_cli(*args, "-m", "rbp")
    assert float(out.split()[-1]) == pytest.approx(0.1 * (1 + 0.9**2), abs=1e-10)
