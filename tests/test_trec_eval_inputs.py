"""The trec_eval drop-in's inputs (issue 38): a signed utility count (2), scores ranked as doubles
under both profiles (3), ``-l`` that is not a whole number (9), qrels without a judgement under
``-c`` (11), files that are not TREC text named in TREC words (12), and ``inf`` / ``-inf``
scores ranked as numbers (17). Expected values are worked by hand from trec_eval's definitions."""

from __future__ import annotations

import math
import random
from pathlib import Path

import polars as pl
import pytest

import recframe
from conftest import CliResult, run_cli
from recframe.trec import read_trec_qrels, read_trec_run
from recframe.trec_eval import Request, evaluate


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def trec(*args: str | Path) -> CliResult:
    """`recframe evaluate --format trec ARGS`: exit code, stdout, stderr."""
    return run_cli("evaluate", "--format", "trec", *args)


def files(tmp_path: Path, run: str | bytes, qrels: str | bytes) -> list[str]:
    return ["--run", str(write(tmp_path, "run", run)), "--qrels", str(write(tmp_path, "qrels", qrels))]


def line(name: str, qid: str, value: str) -> str:
    return f"{name:<22}\t{qid}\t{value}\n"


def one_line_error(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("recframe: error: "), err
    assert "bug in recframe" not in err and "Traceback" not in err, err
    return err


# ------------------------------------------------------------------ 2: utility's signed count

UTILITY_RUN = "1 Q0 a 1 2 r\n1 Q0 c 2 1 r\n"
UTILITY_QRELS = "1 0 a 1\n1 0 b 0\n"


@pytest.mark.parametrize(
    ("flags", "value"),
    [
        # rel_ret = 1 (a), ret = 2, rel = 1; N = 0: the non-relevant documents not retrieved
        # are N + rel_ret - ret - rel = 0 + 1 - 2 - 1 = -2, a signed count (trec_eval's long):
        # 0 * 1 + 0 * (2 - 1) + 1 * (1 - 1) + (-1) * (-2) = 2
        ([], "2.0000"),
        # N = 1: 1 + 1 - 2 - 1 = -1, so (-1) * (-1) = 1
        (["-N", "1"], "1.0000"),
        # N = 10: 10 - 2 = 8, so (-1) * 8 = -8
        (["-N", "10"], "-8.0000"),
    ],
)
def test_utility_counts_the_documents_neither_relevant_nor_retrieved_signed(tmp_path: Path, flags: list[str], value: str) -> None:
    code, out, err = trec("-q", "-m", "utility.0,0,1,-1", *flags, *files(tmp_path, UTILITY_RUN, UTILITY_QRELS))
    assert code == 0, err
    assert out == line("utility_0,0,1,-1", "1", value) + line("utility_0,0,1,-1", "all", value)


@pytest.mark.parametrize("options", [None, {"check_duplicates": True}])  # the one-pass path and the general one
def test_utility_is_signed_on_both_paths_of_the_api(tmp_path: Path, options: dict[str, bool] | None) -> None:
    run, qrels = read_trec_run(write(tmp_path, "run", UTILITY_RUN)), read_trec_qrels(write(tmp_path, "qrels", UTILITY_QRELS))
    for version in ("10", "9"):
        text = evaluate(run, qrels, Request(["utility.0,0,1,-1", "utility"], version=version), options=options)  # type: ignore[arg-type]
        assert text == line("utility_0,0,1,-1", "all", "2.0000"), (version, text)


# -------------------------------------------------- 3: scores compared as doubles, 9.0.8 too

# 0.10000000001 and 0.1 are one float32 (its step near 0.1 is 7.5e-9) but two doubles
NEAR_RUN = "1 Q0 a 1 0.10000000001 r\n1 Q0 b 2 0.1 r\n"
NEAR_QRELS = "1 0 a 1\n"


@pytest.mark.parametrize("profile", ["trec_eval", "trec_eval9"])
def test_scores_equal_in_float32_but_not_in_double_do_not_tie(tmp_path: Path, profile: str) -> None:
    # a (relevant) scores higher as a double: rank 1, so recip_rank 1/1 and P_1 1/1; tied
    # (as float32 would make them) the document numbers decide, decreasing: b first, 1/2 and 0/1
    args = ["--profile", profile, "-m", "recip_rank", "-m", "P.1", *files(tmp_path, NEAR_RUN, NEAR_QRELS)]
    code, out, err = trec(*args)
    assert code == 0, err
    assert out == line("recip_rank", "all", "1.0000") + line("P_1", "all", "1.0000")


@pytest.mark.parametrize("version", ["10", "9"])
@pytest.mark.parametrize("options", [None, {"check_duplicates": True}])
def test_double_scores_on_both_paths_and_exact_ties_still_by_docno(
    tmp_path: Path, version: str, options: dict[str, bool] | None
) -> None:
    request = Request(["recip_rank", "relstring.2"], per_query=True, version=version)  # type: ignore[arg-type]
    qrels = read_trec_qrels(write(tmp_path, "q", NEAR_QRELS))
    near = evaluate(read_trec_run(write(tmp_path, "near", NEAR_RUN)), qrels, request, options=options)
    assert near.splitlines()[:2] == [line("recip_rank", "1", "1.0000").strip("\n"), line("relstring_2", "1", "'1-'").strip("\n")]
    # an exact tie: the document numbers decide, in decreasing byte order (b before a): 1/2
    tied = read_trec_run(write(tmp_path, "tied", "1 Q0 a 1 0.1 r\n1 Q0 b 2 0.1 r\n"))
    text = evaluate(tied, qrels, request, options=options)
    assert text.splitlines()[:2] == [line("recip_rank", "1", "0.5000").strip("\n"), line("relstring_2", "1", "'-1'").strip("\n")]


# ------------------------------------------------------------------- 9: -l a whole number


@pytest.mark.parametrize("level", ["nan", "inf", "-inf", "1e300", "1.5", "NaN"])
def test_a_relevance_level_that_is_not_a_whole_number_exits_2(tmp_path: Path, level: str) -> None:
    code, out, err = trec(f"-l={level}", *files(tmp_path, UTILITY_RUN, UTILITY_QRELS))
    assert code == 2 and out == ""
    err = one_line_error(err)
    shown = f"{float(level):g}"  # as the message prints it
    assert f"-l {shown}: trec_eval's relevance level is a whole number" in err and "Hint: e.g. -l 2" in err


def test_request_refuses_levels_and_counts_that_are_not_whole_numbers_a_c_long_holds() -> None:
    for kwargs, flag in [
        ({"level": math.nan}, "-l nan"),
        ({"level": 1.5}, "-l 1.5"),
        ({"docs_in_collection": 2**70}, f"-N {2**70}"),
        ({"max_retrieved": 2**63}, f"-M {2**63}"),
        ({"level": True}, "-l True"),
    ]:
        with pytest.raises(recframe.RecframeError, match=rf"^{flag}: trec_eval reads a whole number there .*Hint: e\.g\."):
            Request(**kwargs)  # type: ignore[arg-type]
    assert Request(level=-3, docs_in_collection=2**63 - 1).level == -3


def test_a_collection_size_past_a_c_long_exits_2(tmp_path: Path) -> None:
    # it was read as 0: utility.0,0,0,1 printed 0.0000
    code, out, err = trec("-m", "utility.0,0,0,1", "-N", str(2**70), *files(tmp_path, UTILITY_RUN, UTILITY_QRELS))
    assert code == 2 and out == ""
    assert f"-N {2**70}: trec_eval reads a whole number there" in one_line_error(err)


# -------------------------------------------------------- 11: qrels without a judgement, -c


@pytest.mark.parametrize("qrels", ["", "# judged later\n\n   \n# nothing yet\n"])
@pytest.mark.parametrize("flags", [["-c"], ["-c", "--profile", "trec_eval9"], [], ["-c", "-q", "-m", "all_trec"]])
def test_qrels_without_a_judgement_exit_2_naming_the_file(tmp_path: Path, qrels: str, flags: list[str]) -> None:
    given = files(tmp_path, UTILITY_RUN, qrels)
    code, out, err = trec(*flags, *given)
    assert code == 2 and out == ""
    err = one_line_error(err)
    assert f"--qrels {given[3]}: the qrels hold no judgement" in err and "Hint:" in err


def test_evaluate_refuses_qrels_without_a_judgement(tmp_path: Path) -> None:
    run, qrels = read_trec_run(write(tmp_path, "run", UTILITY_RUN)), read_trec_qrels(write(tmp_path, "qrels", ""))
    with pytest.raises(recframe.RecframeError, match="the qrels hold no judgement"):
        evaluate(run, qrels, Request(complete=True))


# ------------------------------------------------------ 12: files that are not TREC text


def random_bytes(seed: int, size: int, top: int = 256) -> bytes:
    rng = random.Random(seed)
    return bytes(rng.randrange(top) for _ in range(size))


@pytest.mark.parametrize("side", ["run", "qrels"])
def test_random_bytes_are_named_in_trec_words_with_their_line(tmp_path: Path, side: str) -> None:
    garbage = bytes(range(256)) * 3 + random_bytes(0, 3000)  # every byte, 0x1F too
    run, qrels = (garbage, UTILITY_QRELS) if side == "run" else (UTILITY_RUN, garbage)
    code, out, err = trec(*files(tmp_path, run, qrels))
    assert code == 2 and out == ""
    err = one_line_error(err)
    # (line 2: the first line ends at byte 0x0A)
    assert f"{side} file " in err and ", line 2: byte 0x80 (at byte 128) is not UTF-8 text" in err
    for polars_words in ("new_columns", "Schema", "could not read"):
        assert polars_words not in err


@pytest.mark.parametrize(
    ("side", "layout", "n"),
    [("run", "qid Q0 docno rank score tag", 6), ("qrels", "qid iter docno relevance", 4)],
)
def test_ascii_garbage_with_every_control_byte_names_the_first_bad_line(tmp_path: Path, side: str, layout: str, n: int) -> None:
    # UTF-8, but holding every byte the line reader could split lines on: one line, 0x01 to 0x7F
    garbage = b"# a comment\n" + bytes(b for b in range(1, 128) if b != 0x0A) + b"\n"
    run, qrels = (garbage, UTILITY_QRELS) if side == "run" else (UTILITY_RUN, garbage)
    code, out, err = trec(*files(tmp_path, run, qrels))
    assert code == 2 and out == ""
    err = one_line_error(err)
    assert f"{side} file " in err and ", line 2: '\\x01\\x02" in err and f"is not '{layout}': " in err
    assert f"expected {n} (1 malformed line(s) in all)" in err


def test_a_docno_holding_byte_0x1f_is_a_document_number_like_any(tmp_path: Path) -> None:
    # 0x1F is no blank for trec_eval (C's isspace): a\x1fb is one document number, relevant here
    run = "1 Q0 a\x1fb 1 2 r\n1 Q0 c 2 1 r\n"
    code, out, err = trec("-q", "-m", "recip_rank", "-m", "num_rel_ret", *files(tmp_path, run, "1 0 a\x1fb 1\n1 0 c 0\n"))
    assert code == 0, err
    assert out == (
        line("num_rel_ret", "1", "1") + line("recip_rank", "1", "1.0000")
        + line("num_rel_ret", "all", "1") + line("recip_rank", "all", "1.0000")
    )  # fmt: skip
    for eager in (False, True):
        assert read_trec_run(tmp_path / "run", eager=eager).collect()["item_id"].to_list() == ["a\x1fb", "c"]
        assert read_trec_qrels(tmp_path / "qrels", eager=eager).collect()["item_id"].to_list() == ["a\x1fb", "c"]


@pytest.mark.parametrize("eager", [False, True])
@pytest.mark.parametrize(
    ("label", "text", "what"),
    [
        (
            "run",
            "q1 Q0 d1 1 2 r\nq1 Q0 d2 2.0\n",
            "line 2: 'q1 Q0 d2 2.0' is not 'qid Q0 docno rank score tag': 4 field(s), expected 6",
        ),
        ("run", "q1 Q0 d1 1 high r\n", "the score 'high' is not a number"),
        ("run", "q1 Q0 d1 1 nan r\n", "the score 'nan' is NaN"),
        ("qrels", "q1 0 d1 1 extra\n", "line 1: 'q1 0 d1 1 extra' is not 'qid iter docno relevance': 5 field(s), expected 4"),
        ("qrels", "q1 0 d1\x1f 0.5\n", "the relevance '0.5' is not a whole number"),
    ],
)
def test_a_malformed_line_says_what_is_wrong(tmp_path: Path, eager: bool, label: str, text: str, what: str) -> None:
    read = read_trec_run if label == "run" else read_trec_qrels
    with pytest.raises(recframe.RecframeError) as error:
        read(write(tmp_path, label, text), eager=eager)
    message = str(error.value)
    assert message.startswith(f"{label} file ") and what in message and "(1 malformed line(s) in all)" in message


# ----------------------------------------------------------- 17: inf and -inf are numbers


def test_minus_inf_is_ranked_as_a_number(tmp_path: Path) -> None:
    # a, the one relevant document, retrieved at rank 1 of 1: P_5 = 1/5
    code, out, err = trec("-m", "P.5", *files(tmp_path, "1 Q0 a 1 -inf r\n", "1 0 a 1\n"))
    assert code == 0, err
    assert out == line("P_5", "all", "0.2000")


@pytest.mark.parametrize("profile", ["trec_eval", "trec_eval9"])
def test_infinite_scores_rank_first_and_last_ties_by_docno(tmp_path: Path, profile: str) -> None:
    # order: b (inf) and e (inf) tie, by docno decreasing: e, b; then c (1), d (-1e300), a (-inf).
    # relevant: b (at 2) and a (at 5): relstring '01001', recip_rank 1/2, map (1/2 + 2/5) / 2
    run = "1 Q0 a 1 -inf r\n1 Q0 b 2 inf r\n1 Q0 c 3 1 r\n1 Q0 d 4 -1e300 r\n1 Q0 e 5 +Infinity r\n"
    qrels = "1 0 a 1\n1 0 b 1\n1 0 c 0\n1 0 d 0\n1 0 e 0\n"
    args = ["--profile", profile, "-m", "relstring", "-m", "recip_rank", "-m", "map", "-q", "--precision", "6"]
    code, out, err = trec(*args, *files(tmp_path, run, qrels))
    assert code == 0, err
    assert out.splitlines()[:3] == [
        line("map", "1", f"{(1 / 2 + 2 / 5) / 2:.6f}").strip("\n"),
        line("recip_rank", "1", f"{1 / 2:.6f}").strip("\n"),
        line("relstring", "1", "'01001'").strip("\n"),
    ]


@pytest.mark.parametrize("eager", [False, True])
def test_the_library_ranks_a_run_with_infinite_scores(tmp_path: Path, eager: bool) -> None:
    path = write(tmp_path, "run", "1 Q0 a 1 -inf r\n1 Q0 b 2 inf r\n1 Q0 c 3 1 r\n2 Q0 a 1 -inf r\n")
    run = read_trec_run(path, eager=eager)
    assert run.collect()["score"].to_list() == [-math.inf, math.inf, 1.0, -math.inf]
    truth = pl.LazyFrame({"user_id": ["1", "2"], "item_id": ["a", "a"], "relevance": [1, 1]})
    out = recframe.per_user(run, truth=truth, score="score", k=3, metrics=["rr"]).collect().sort("user_id")
    assert out["rr@3"].to_list() == [1 / 3, 1 / 1]  # a after b (inf) and c (1); alone in list 2


def test_nan_scores_stay_refused(tmp_path: Path) -> None:
    code, out, err = trec(*files(tmp_path, "1 Q0 a 1 2 r\n1 Q0 b 2 nan r\n", "1 0 a 1\n"))
    assert code == 2 and out == ""
    assert "line 2: '1 Q0 b 2 nan r' is not 'qid Q0 docno rank score tag': the score 'nan' is NaN" in one_line_error(err)
