"""`recframe evaluate --format trec` against trec_eval's own outputs, line for line.

The files are trec_eval 10.0's test folder and outputs written by trec_eval 10.0 and 9.0.8
(tests/data/trec_eval/README.md says which and how). The text is compared, not numbers."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import recframe
from recframe import cli
from recframe.trec_eval import Measure, Request, evaluate

DATA = Path(__file__).parent / "data" / "trec_eval"

# expected file -> the trec_eval command line (flags, then qrels and run), as recframe takes it
CASES = {
    # trec_eval 10.0's own (its Makefile's quicktest)
    "out.test": "qrels.test results.test",
    "out.test.a": "-m all_trec qrels.test results.test",
    "out.test.aq": "-m all_trec -q qrels.test results.test",
    "out.test.aqc": "-m all_trec -q -c qrels.test results.trunc",
    "out.test.aqcM": "-m all_trec -q -c -M100 qrels.test results.trunc",
    "out.test.aql": "-m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test",
    "out.test.meas_params": "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
    "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 -mndcg.1=3,2=9,4=4.5 "
    "-mndcg_cut.10,20,23.4 -msuccess.2,5,20 qrels.test results.test",
    # written by trec_eval 10.0
    "out10.aqJl3": "-q -J -l3 -m all_trec qrels.rel_level results.test",
    "out10.params": "-q -M 20 -N 100000 -m official -m utility.1,-1,2,0.5 -m set_F.0.5 -m rbp.p=0.5 "
    "-m rbp_resid.p=0.7 -m G.1=2,2=1 -m ndcg_rel.0=1,1=3 -m dcg -m relstring.3 -m unj.1,3 -m relative_P.2,50 "
    "qrels.rel_level results.test",
    "out10.ties.aqc": "-q -m all_trec -c ties.qrels ties.run",
    "out10.ties.aqcJl2": "-q -J -m all_trec -c -l2 ties.qrels ties.run",
    # written by trec_eval 9.0.8
    "out9.aq": "--profile trec_eval9 -q -m all_trec qrels.test results.test",
    "out9.aqc": "--profile trec_eval9 -q -c -m all_trec qrels.test results.trunc",
    "out9.trunc": "--profile trec_eval9 qrels.test results.trunc",
    "out9.aql": "--profile trec_eval9 -m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test",
    "out9.ties.aq": "--profile trec_eval9 -q -m all_trec ties.qrels ties.run",
    # written by trec_eval 10.0 and 9.0.8 on cases of tests/peers/trec_eval_differential.py
    # whose means fall on half a unit of the fourth decimal (11pt_avg, rbp_resid)
    "out9.diff1.aqcl1": "--profile trec_eval9 -q -c -l 1 -m all_trec diff1.qrels diff1.run",
    "out10.diff1.aqcl1": "-q -c -l 1 -m all_trec diff1.qrels diff1.run",
    "out10.diff2.aqM4": "-q -M 4 -m all_trec diff2.qrels diff2.run",
}


def command(line: str) -> list[str]:
    *flags, qrels, run = line.split()
    return ["evaluate", "--format", "trec", *flags, "--qrels", str(DATA / qrels), "--run", str(DATA / run)]


@pytest.mark.parametrize("expected", list(CASES))
def test_prints_what_trec_eval_prints(expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(command(CASES[expected])) == 0
    got = capsys.readouterr().out.splitlines()
    want = (DATA / expected).read_text().splitlines()
    assert len(got) == len(want)
    differ = [(w, g) for w, g in zip(want, got) if w != g]
    if expected == "out10.ties.aqcJl2":  # trec_eval's 0 / 0 (docs/ir.md): recframe prints numbers there
        assert differ and all(w.endswith("-nan") and w.split()[:2] == g.split()[:2] for w, g in differ)
        assert all(not math.isnan(float(g.split()[-1])) for _, g in differ)
        return
    assert not differ, "\n".join(f"trec_eval: {w!r}\nrecframe:  {g!r}" for w, g in differ[:10])


def test_the_api_gives_the_command_lines_numbers() -> None:
    """per_user(profile="trec_eval") on read_trec_run/read_trec_qrels: the CLI's values, negative
    qrels grades read as "in the pool, not judged" (infAP, num_nonrel_judged_ret)."""
    run, qrels = recframe.read_trec_run(DATA / "results.test"), recframe.read_trec_qrels(DATA / "qrels.rel_level")
    request = Request(["map", "P.5", "infAP", "num_nonrel_judged_ret", "bpref", "iprec_at_recall"], per_query=True, level=2)
    text = evaluate(run, qrels, request)
    cli_values = {(n.strip(), q): float(v) for n, q, v in (line.split("\t") for line in text.splitlines())}
    api = recframe.per_user(
        run, truth=qrels, score="score", k=[5, 10**9], threshold=2, profile="trec_eval",
        metrics=["ap", "precision", "infap", "num_nonrel_judged_ret", "bpref", "iprec_at_recall"],
    ).collect()  # fmt: skip
    pairs = {"map": "ap@1000000000", "P_5": "precision@5", "infAP": "infap", "bpref": "bpref"}
    pairs |= {"num_nonrel_judged_ret": "num_nonrel_judged_ret", "iprec_at_recall_0.60": "iprec_at_recall_60"}
    for row in api.iter_rows(named=True):
        for name, column in pairs.items():
            assert row[column] == pytest.approx(cli_values[(name, row["user_id"])], abs=5e-5), (name, row["user_id"])
    # trec_eval's numbers for query 303 under -l2 (its 304 entries at -1 are pooled, not judged)
    q303 = api.filter(pl.col("user_id") == "303").row(0, named=True)
    assert q303["num_nonrel_judged_ret"] == 138 and round(q303["infap"], 4) == 0.1200


@pytest.mark.parametrize(
    ("files", "flags", "fragment"),
    [
        ({"run": "q1 Q0 a 1 2 t\nq1 Q0 a 2 1 t\n", "qrels": "q1 0 a 1\n"}, [], "retrieves document 'a' twice"),
        ({"run": "q1 Q0 a 1 2 t\n", "qrels": "q1 0 a 1\nq1 0 a 0\n"}, [], "judges document 'a' twice"),
        ({"run": "q1 Q0 a 1 2 t\n", "qrels": "q1 0 a 1.5\n"}, [], "qrels file .* line 1: 'q1 0 a 1.5'"),
        ({"run": "q1 Q0 a 1 2 t\n", "qrels": "q1 0 a 1\nq2 0 b 1\n"}, [], "query 'q2' has no line in the run.*exit 4.*-c"),
        ({"run": "q1 Q0 a 1 2 t\n", "qrels": "q1 0 a 1\n"}, ["-m", "P.0"], "cut-offs must be positive"),
        ({"run": "q1 Q0 a 1 2 t\n", "qrels": "q1 0 a 1\n"}, ["-m", "ndcg.1"], "'1' is not name=value"),
        ({"run": "q1 Q0 a 1 2 t\n", "qrels": "q1 0 a 1\n"}, ["-m", "utility.1,2"], "utility takes 4 coefficients"),
        ({"run": "q1 Q0 a 1 2 t\n", "qrels": "q1 0 a 1\n"}, ["-m", "prefs_simp"], "preference and judgement-group"),
        ({"run": "q1 Q0 a 1 2 t\n", "qrels": "q1 0 a 1\n"}, ["-m", "mrr"], "'mrr' is not a trec_eval measure"),
        ({"run": "q1 Q0 a 1 2 t\n", "qrels": "q1 0 a 1\n"}, ["-l", "1.5"], "relevance level is a whole number"),
        ({"run": "q1 Q0 a 1 2 t\n", "qrels": "q1 0 a 1\n"}, ["--profile", "ranx"], "--profile trec_eval"),
        ({"run": "q1 Q0 a 1 2 t\n", "qrels": "q1 0 a 1\n"}, ["--profile", "trec_eval9", "-m", "rbp"], "added in trec_eval 10.0"),
        ({"run": "q1 Q0 a 1 2 t\n", "qrels": "q1 0 a 1\n"}, ["--ties", "item_asc"], "--ties: the drop-in orders"),
    ],
)
def test_refusals_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, str], flags: list[str], fragment: str
) -> None:
    for name, body in files.items():
        (tmp_path / name).write_text(body)
    args = ["evaluate", "--format", "trec", "--run", str(tmp_path / "run"), "--qrels", str(tmp_path / "qrels"), *flags]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Hint:" in err, err
    assert re.search(fragment, err), err


def test_no_query_in_both_files_under_c(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """trec_eval 10.0 with -c scores every query of the qrels 0 (its output, built from source,
    below); 9.0.8 stops there with -c too (exit 7), and recframe refuses under its profile."""
    (tmp_path / "run").write_text("q1 Q0 a 1 2 t\n")
    (tmp_path / "qrels").write_text("q2 0 a 1\nq3 0 b 0\n")
    files = ["--run", str(tmp_path / "run"), "--qrels", str(tmp_path / "qrels")]
    measures = ["-m", "num_q", "-m", "P.5", "-m", "num_rel", "-m", "map"]
    assert cli.main(["evaluate", "--format", "trec", "-c", "-q", *measures, *files]) == 0
    expected = [
        ("num_rel", "q2", "1"), ("map", "q2", "0.0000"), ("P_5", "q2", "0.0000"),
        ("num_rel", "q3", "0"), ("map", "q3", "0.0000"), ("P_5", "q3", "0.0000"),
        ("num_q", "all", "2"), ("num_rel", "all", "1"), ("map", "all", "0.0000"), ("P_5", "all", "0.0000"),
    ]  # fmt: skip
    assert capsys.readouterr().out == "".join(f"{m:<22}\t{q}\t{v}\n" for m, q, v in expected)
    assert cli.main(["evaluate", "--format", "trec", "--profile", "trec_eval9", "-c", *measures, *files]) == 2
    assert "no query has both" in capsys.readouterr().err


@pytest.mark.parametrize("profile", ["trec_eval", "trec_eval9"])
def test_set_map_divides_once_as_trec_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str], profile: str) -> None:
    """3 relevant of 5 retrieved, R = 32: trec_eval (9.0.8 and 10.0) prints 9 / 160 = 0.05625 as
    0.0563; (3/5) * (3/32) rounds to 0.0562."""
    (tmp_path / "run").write_text("".join(f"q1 Q0 d{i} {i + 1} {10 - i} t\n" for i in range(5)))
    relevant = [f"d{i}" for i in (0, 2, 4)] + [f"x{i}" for i in range(29)]
    (tmp_path / "qrels").write_text("".join(f"q1 0 {doc} 1\n" for doc in relevant))
    files = ["--run", str(tmp_path / "run"), "--qrels", str(tmp_path / "qrels")]
    assert cli.main(["evaluate", "--format", "trec", "--profile", profile, "-q", "-m", "set_map", *files]) == 0
    assert capsys.readouterr().out == "set_map               \tq1\t0.0563\nset_map               \tall\t0.0563\n"
    frame = pl.DataFrame({"user_id": ["q1"] * 32, "item_id": relevant, "rank": [1, 3, 5, *[None] * 29], "relevance": [1] * 32})
    frame = pl.concat(
        [frame, pl.DataFrame({"user_id": ["q1", "q1"], "item_id": ["d1", "d3"], "rank": [2, 4], "relevance": [0, 0]})]
    )
    value = recframe.per_user(frame, metrics=["set_map"], profile=profile)["set_map"][0]
    assert value == 9 / 160


@pytest.mark.parametrize("profile", ["trec_eval", "trec_eval9"])
def test_means_on_half_a_unit_print_as_trec_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str], profile: str) -> None:
    """P_1000 of 2, 9, 4 and 4 relevant documents: 0.019 / 4 = 0.00475, which trec_eval (9.0.8
    and 10.0) prints 0.0047. Divided as Polars divides by a scalar (by the reciprocal: 9 * 0.001
    = 0.009000000000000001), the mean comes out a bit above and printed 0.0048."""
    hits = {"1": 2, "a": 9, "b7": 4, "q1": 4}
    run = [f"{q} Q0 d{i} {i + 1} {100 - i} t\n" for q, n in hits.items() for i in range(n)]
    (tmp_path / "run").write_text("".join(run))
    (tmp_path / "qrels").write_text("".join(f"{q} 0 d{i} 1\n" for q, n in hits.items() for i in range(n)))
    files = ["--run", str(tmp_path / "run"), "--qrels", str(tmp_path / "qrels")]
    assert cli.main(["evaluate", "--format", "trec", "--profile", profile, "-m", "P.1000", *files]) == 0
    assert capsys.readouterr().out == "P_1000                \tall\t0.0047\n"
    frame = pl.DataFrame({"user_id": ["a"] * 9, "item_id": list("abcdefghi"), "rank": range(1, 10), "relevance": [1] * 9})
    assert recframe.per_user(frame, k=1000, metrics=["precision"])["precision@1000"][0] == 9 / 1000


def test_trec_eval_flags_need_trec_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recs = tmp_path / "recs.csv"
    pl.DataFrame({"user_id": [1], "item_id": [1], "rank": [1], "relevance": [1]}).write_csv(recs)
    assert cli.main(["evaluate", str(recs), "-c"]) == 2
    assert "-c: trec_eval's flags go with --format trec" in capsys.readouterr().err
    assert cli.main(["evaluate", str(recs), "--format", "trec", "-J", "-M", "5"]) == 2
    assert "-J -M: trec_eval's flags read TREC files" in capsys.readouterr().err


def test_measure_parameters_as_trec_eval_reads_them() -> None:
    # the first -m that gives a measure parameters wins; cut-offs sorted; atol reads 23.4 as 23
    request = Request(["all_trec", "P.20,5", "P.7", "ndcg_cut.23.4"])
    chosen = {m.family.name: m for m in request.chosen}
    assert chosen["P"].names() == ["P_5", "P_20"] and chosen["ndcg_cut"].names() == ["ndcg_cut_23"]
    assert chosen["relstring"].names() == ["relstring"] and "runid" in chosen
    assert Measure(chosen["iprec_at_recall"].family, ".25,.5").names() == ["iprec_at_recall_0.25", "iprec_at_recall_0.50"]
    assert [m.family.name for m in Request(["set"]).chosen][-3:] == ["set_recall", "set_map", "set_F"]
    # 9.0.8 has no rbp, rbp_resid or unj: all_trec leaves them out there
    assert "unj" not in {m.family.name for m in Request(["all_trec"], version="9").chosen}
    with pytest.raises(recframe.RecframeError, match="given twice"):
        Request(["P.5,5"])


@pytest.mark.parametrize("expected", ["out.test.aq", "out.test.aqc", "out.test.aqcM"])
def test_prints_the_same_a_piece_and_a_few_queries_at_a_time(
    expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The drop-in reads plain files 1 KiB at a time and evaluates 500 run rows (whole
    queries) at a time, as it reads and evaluates a large run: trec_eval's text all the same.
    (The files are written with single spaces, so the CSV reader reads them in pieces.)"""
    import recframe.trec
    import recframe.trec_eval as module

    monkeypatch.setattr(recframe.trec, "_PIECE", 1024)
    monkeypatch.setattr(module, "_CHUNK_ROWS", 500)
    monkeypatch.setattr(module, "_CHUNK_ROWS_HERE", 500)
    chunks: list[int] = []
    real = module._evaluate_chunk
    monkeypatch.setattr(module, "_evaluate_chunk", lambda run, *args: chunks.append(run.height) or real(run, *args))
    pieces: list[int] = []
    read = recframe.trec._read_piece
    monkeypatch.setattr(recframe.trec, "_read_piece", lambda piece, *args: pieces.append(len(piece)) or read(piece, *args))
    *flags, qrels, run = CASES[expected].split()
    for name in (qrels, run):  # (the first fields of results.test hold no blank: one space each)
        lines = (DATA / name).read_text().splitlines()
        (tmp_path / name).write_text("".join(" ".join(line.split()[:6]) + "\n" for line in lines))
    files = ["--qrels", str(tmp_path / qrels), "--run", str(tmp_path / run)]
    assert cli.main(["evaluate", "--format", "trec", *flags, *files]) == 0
    assert capsys.readouterr().out == (DATA / expected).read_text()
    assert len(chunks) >= 2 and max(chunks) <= 1000  # (a query of results.test has up to 1000 rows)
    assert len(pieces) > 10 and max(pieces) < 1200


def test_the_exact_join_when_pair_hashes_collide(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The drop-in joins the run and the qrels on a 64-bit hash of (query, document) when the
    hashes are distinct; on a collision it joins on the pairs: the same text."""
    import recframe.trec_eval as module

    real = module._with_hash
    monkeypatch.setattr(module, "_with_hash", lambda frame: (real(frame)[0], False))
    assert cli.main(command(CASES["out.test.aqc"])) == 0
    assert capsys.readouterr().out == (DATA / "out.test.aqc").read_text()


@pytest.mark.parametrize("keys", ["one key for all", "distinct keys of the wrong pairs"])
def test_the_one_pass_path_defers_on_a_pair_hash_collision(
    keys: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The one-pass path joins the run and the qrels on a 64-bit key of (query, document):
    keys shared within a file, or a match between different pairs, send the call to the
    general path, which prints the same text."""
    import recframe.trec_eval as module

    def fake() -> pl.Expr:  # every key equal, or each row's place
        same = pl.lit(0, dtype=pl.UInt64) if keys == "one key for all" else pl.int_range(pl.len(), dtype=pl.UInt64)
        return same.alias(module._HASH)

    calls: list[object] = []
    real = module._evaluate_generic
    monkeypatch.setattr(module, "_pair_keys", fake)
    monkeypatch.setattr(module, "_evaluate_generic", lambda *args: calls.append(args) or real(*args))
    assert cli.main(command(CASES["out.test.aqc"])) == 0
    assert calls and capsys.readouterr().out == (DATA / "out.test.aqc").read_text()


def _drawn_files(run: list[tuple[str, str, float]], qrels: list[tuple[str, str, int]]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The run and the qrels drawn as lines, as read frames (a document once per query: the
    last line of a repeated one)."""
    ranked = pl.DataFrame(
        list(dict(((q, d), (q, d, s)) for q, d, s in run).values()), schema=["user_id", "item_id", "score"], orient="row"
    )
    judged = pl.DataFrame(
        list(dict(((q, d), (q, d, g)) for q, d, g in qrels).values()), schema=["user_id", "item_id", "relevance"], orient="row"
    )
    return ranked, judged


_QUERIES = st.sampled_from(["q1", "q2", "Q10", "3"])
_DOCS = st.sampled_from(["d1", "D1", "d2", "10d", "2d", "d10", "x"])


def _gain_measures_both_ways(ranked: pl.DataFrame, judged: pl.DataFrame, request: Request) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The measures computed here, read from the rows they need and from every position."""
    import recframe.trec_eval as module

    here, _ = module._split(request)
    codes = module.ranked_codes(ranked, judged, request).filter(pl.col("position").is_not_null())
    counts = module.level_counts(judged)
    n_rel = module.per_query_counts(codes, module.relevant_counts(counts, request), request)
    needed = module.measures_here(here, codes, counts, n_rel, request)
    real = module._gain_frame
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "_gain_frame", lambda m, c, k, every_position=False: real(m, c, k, every_position=True))
        every = module.measures_here(here, codes, counts, n_rel, request)
    return needed, every


@pytest.mark.parametrize("gains", ["", "1=0.1,2=0.7", "1=3e16,2=1e16"])
def test_g_counts_the_positions_it_skips(gains: str) -> None:
    """Past the ideal ranking, G's cost adds 1 for each position, so a gain twelve positions
    on has the cost of the twelve positions before it, which have no row: for whole gains
    whose sums are exact, as counted; for fractional gains, or sums past 2**53 (where adding 1
    twelve times is not adding 12), read over every position."""
    import recframe.trec_eval as module

    docs = [f"x{i}" for i in range(12)]
    ranked = pl.DataFrame({"user_id": "q1", "item_id": ["x", "d2", *docs, "d1"], "score": [-float(i) for i in range(15)]})
    judged = pl.DataFrame({"user_id": "q1", "item_id": ["d1", "d2"], "relevance": [1, 2]})
    request = Request([f"G.{gains}" if gains else "G"])
    codes = module.ranked_codes(ranked, judged, request).filter(pl.col("position").is_not_null())
    measure = module._split(request)[0][0]
    frame = module._gain_frame(measure, codes, module.level_counts(judged))
    assert frame["position"].to_list() == [1, 2, 3, 15] and frame["skipped"].to_list() == [0, 0, 0, 11]
    needed, every = _gain_measures_both_ways(ranked, judged, request)
    assert needed.equals(every) and 0 < needed.item(0, 1) < 1


@settings(max_examples=40, deadline=None)
@given(
    run=st.lists(st.tuples(_QUERIES, _DOCS, st.sampled_from([0.5, 1.0, 2.0, 3.25])), max_size=25),
    qrels=st.lists(st.tuples(_QUERIES, _DOCS, st.integers(-1, 3)), min_size=1, max_size=20),
    gains=st.sampled_from(["", "1=2,2=1", "0=0.5,1=1.5,3=0.25", "-1=0.5,1=3", "0=-1,2=4", "1=3e16,2=1e16"]),
    judged_only=st.booleans(),
)
def test_the_gain_measures_read_only_the_positions_they_need(
    run: list[tuple[str, str, float]], qrels: list[tuple[str, str, int]], gains: str, judged_only: bool
) -> None:
    """G, ndcg_rel, Rndcg, rbp and dcg read only the gain frame's rows where the run has a gain
    or the ideal ranking has not ended: each gives the same value, to the bit, as read over
    every position (whole and fractional gains, negative ones, and gains whose sums pass 2**53,
    where G reads every position)."""
    ranked, judged = _drawn_files(run, qrels)
    params = f".{gains}" if gains else ""
    request = Request([f"G{params}", f"ndcg_rel{params}", f"Rndcg{params}", "rbp.p=0.7", f"dcg{params}"], judged_only=judged_only)
    needed, every = _gain_measures_both_ways(ranked, judged, request)
    assert needed.width == 6 and needed.equals(every)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # new runs each time
@given(
    run=st.lists(st.tuples(_QUERIES, _DOCS, st.sampled_from([0.5, 1.0, 2.0, 3.25])), max_size=25),
    qrels=st.lists(st.tuples(_QUERIES, _DOCS, st.integers(-1, 3)), min_size=1, max_size=20),
    flags=st.sampled_from([[], ["all_trec"], ["P.1,3", "ndcg_cut.2", "map_cut.2,1000", "bpref", "infAP", "Rprec_mult"]]),
    version=st.sampled_from(["9", "10"]),
    chunk_rows=st.sampled_from([1, 3, 1_000_000]),
    in_order=st.booleans(),
    options=st.fixed_dictionaries(
        {"complete": st.booleans(), "judged_only": st.booleans(), "level": st.integers(1, 2)},
        optional={"max_retrieved": st.integers(1, 4)},
    ),
)
def test_the_one_pass_path_prints_the_general_paths_text(
    run: list[tuple[str, str, float]],
    qrels: list[tuple[str, str, int]],
    flags: list[str],
    version: str,
    chunk_rows: int,
    in_order: bool,
    options: dict,  # type: ignore[type-arg]
) -> None:
    """The drop-in's one-pass path (trec_eval's own conventions) and the path through
    recframe.per_user print the same text, flags, ties and unjudged grades included, whether
    the one-pass path takes the queries all at once or a few run rows at a time (whole
    queries), and whether the run lists each query's lines together or not."""
    import recframe.trec_eval as module

    ranked, judged = _drawn_files(run, qrels)
    ranked = ranked.sort("user_id", maintain_order=True) if in_order else ranked
    request = Request(flags, per_query=True, version=version, **options)  # type: ignore[arg-type]

    def text(path: Callable[[], str | None]) -> str:
        try:
            return path() or "deferred"
        except recframe.RecframeError as error:
            return f"refused: {error}"

    fast = text(lambda: module._evaluate_fast(ranked, judged, request, "tag", chunk_rows=chunk_rows))
    assume(fast != "deferred")
    assert fast == text(lambda: module._evaluate_generic(ranked, judged, request, "tag", None))
