"""TREC run and qrels files: parsing by hand, malformed lines, and a round trip through files
evaluated by recframe (profile="trec_eval") and by trec_eval itself (pytrec_eval)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import recframe
from recframe.trec import QRELS_SCHEMA, RUN_SCHEMA, read_trec_qrels, read_trec_run


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_run_file_parsed_with_comments_blank_lines_and_tabs(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "# header\nq1 Q0 d1 1 2.5 bm25\n\n   \nq1\tQ0\t d2  2 -1e2 bm25\nq10 Q0 d1 1 0 x\n")
    run = read_trec_run(path)
    assert isinstance(run, pl.LazyFrame)
    out = run.collect()
    assert out.schema == pl.Schema(RUN_SCHEMA)
    assert out.rows() == [("q1", "d1", 1, 2.5, "bm25"), ("q1", "d2", 2, -100.0, "bm25"), ("q10", "d1", 1, 0.0, "x")]


def test_qrels_file_parsed(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "q1 0 d1 1\nq1 0 d2 0\n# judged later\nq2 0 d9 -1\n")
    out = read_trec_qrels(path).collect()
    assert out.schema == pl.Schema(QRELS_SCHEMA)
    assert out.rows() == [("q1", "d1", 1), ("q1", "d2", 0), ("q2", "d9", -1)]


@pytest.mark.parametrize(
    ("text", "line", "count"),
    [
        ("q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5\n", 2, 1),  # truncated: five fields
        ("q1 Q0 d1 1 high bm25\n", 1, 1),  # score not a number
        # NaN is refused; inf and -inf are numbers, ranked as trec_eval ranks them (issue 38)
        ("q1 Q0 d1 1 nan bm25\nq1 Q0 d2 2 inf bm25\nq1 Q0 d3 3 -inf bm25\nq1 Q0 d4 4 NaN bm25\n", 1, 2),
    ],
)
def test_malformed_run_lines_are_named_with_their_number(tmp_path: Path, text: str, line: int, count: int) -> None:
    path = write(tmp_path, "run.txt", text)
    with pytest.raises(recframe.RecframeError, match=rf"run file .*run\.txt', line {line}: .*\({count} malformed line"):
        read_trec_run(path)


def test_the_rank_field_is_read_but_never_refused(tmp_path: Path) -> None:
    # trec_eval ignores it (it orders by score): "2.0" reads as 2, anything else as null
    path = write(tmp_path, "run.txt", "q1 Q0 d1 2.0 2.5 bm25\nq1 Q0 d2 one 1.5 bm25\nq1 Q0 d3 2.5 1.0 bm25\n")
    assert read_trec_run(path).collect()["rank"].to_list() == [2, None, None]
    with pytest.raises(recframe.RecframeError, match=r"line 1: 'q1 Q0 d1 2.0' is not"):
        read_trec_run(write(tmp_path, "short.txt", "q1 Q0 d1 2.0\n"))  # a missing field still is


def test_bytes_that_are_not_utf8_are_refused_with_their_line(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(b"q1 Q0 d1 1 2.5 bm25\nq1 Q0 d\xe92 2 1.5 bm25\n")
    with pytest.raises(recframe.RecframeError, match=r"run file .*, line 2: byte 0xE9 .* is not UTF-8 text.*Hint: convert"):
        read_trec_run(path)
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(b"q1 0 d\xe9 1\n")
    with pytest.raises(recframe.RecframeError, match=r"qrels file .*, line 1: byte 0xE9"):
        read_trec_qrels(qrels)


def test_control_bytes_and_a_written_replacement_character_are_docnos_like_any(tmp_path: Path) -> None:
    run = write(tmp_path, "run.txt", "q1 Q0 d\x011 1 2.5 bm25\nq1 Q0 d\ufffd 2 1.5 bm25\n")
    qrels = write(tmp_path, "qrels.txt", "q1 0 d\x011 1\nq1 0 d\ufffd 1\n")
    out = recframe.summary(read_trec_run(run), truth=read_trec_qrels(qrels), score="score", k=2, metrics=["recall"]).collect()
    assert out["recall@2"].to_list() == [1.0]


def test_malformed_qrels_line(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "q1 0 d1 1\nq1 0 d2 0.5\n")
    with pytest.raises(recframe.RecframeError, match=r"qrels file .*, line 2: 'q1 0 d2 0.5' is not 'qid iter docno relevance'"):
        read_trec_qrels(path)


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(recframe.RecframeError, match=r"run file .*nope\.txt': not found"):
        read_trec_run(tmp_path / "nope.txt")
    with pytest.raises(recframe.RecframeError, match=r"qrels file .*: a folder"):
        read_trec_qrels(tmp_path)


def test_empty_file_gives_an_empty_frame(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", "# nothing retrieved\n")
    assert read_trec_run(path).collect().shape == (0, 5)


def test_files_evaluated_as_trec_eval_does(tmp_path: Path) -> None:
    """Seeded random run and qrels files, with tied scores, unjudged and judged-not-relevant
    documents and queries without relevant documents: recframe's trec_eval profile on the
    parsed files gives trec_eval's per-query values."""
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval (pytrec-eval-terrier) is trec_eval's reference")
    rng = np.random.default_rng(7)
    run_lines, qrels_lines = [], []
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(25):
        qid = f"q{q}"
        docs = [f"d{d}" for d in rng.choice(60, size=30, replace=False)]
        n_ret = int(rng.integers(1, 21))
        run[qid] = {}
        for position, doc in enumerate(docs[:n_ret], start=1):
            score = float(rng.integers(0, 8)) / 2  # few distinct values: many ties
            run[qid][doc] = score
            run_lines.append(f"{qid} Q0 {doc} {position} {score} test")
        # judge a random half of the docs (some retrieved, some not): grades 0-2
        qrels[qid] = {doc: int(rng.integers(0, 3)) for doc in docs if rng.random() < 0.5}
        qrels[qid] = qrels[qid] or {docs[-1]: 0}  # every query has a judgement
        qrels_lines += [f"{qid} 0 {doc} {grade}" for doc, grade in qrels[qid].items()]
    run_path = write(tmp_path, "run.txt", "\n".join(run_lines) + "\n")
    qrels_path = write(tmp_path, "qrels.txt", "\n".join(qrels_lines) + "\n")

    ours = recframe.per_user(
        read_trec_run(run_path),
        truth=read_trec_qrels(qrels_path),
        score="score",
        k=[5, 10],
        metrics=["precision", "recall", "hit_rate", "ap", "ndcg", "rr", "r_precision"],
        profile="trec_eval9",
    ).collect()
    measures = {"P.5,10", "recall.5,10", "success.5,10", "map_cut.5,10", "ndcg_cut.5,10", "recip_rank", "Rprec"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    pairs = [
        *(
            (f"{m}_{k}", f"{c}@{k}")
            for m, c in [
                ("P", "precision"),
                ("recall", "recall"),
                ("success", "hit_rate"),
                ("map_cut", "ap"),
                ("ndcg_cut", "ndcg"),
            ]
            for k in (5, 10)
        ),
        ("recip_rank", "rr@10"),  # rr_cutoff=False under the profile: no cut-off, as trec_eval
        ("Rprec", "r_precision"),
    ]
    assert sorted(ours["user_id"].to_list()) == sorted(theirs)
    checked = 0
    for row in ours.iter_rows(named=True):
        for measure, column in pairs:
            assert row[column] == pytest.approx(theirs[row["user_id"]][measure], abs=1e-9), (row["user_id"], measure)
            checked += 1
    assert checked == 25 * len(pairs)
    # trec_eval's gm_map: the geometric mean (floor 1e-5) of the uncut AP over the queries
    gm = recframe.summary(
        read_trec_run(run_path),
        truth=read_trec_qrels(qrels_path),
        score="score",
        k=20,
        metrics=["ap"],
        profile="trec_eval9",
        aggregate="gmean",
    ).collect()
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"gm_map"}).evaluate(run)  # per query: log(max(map, 1e-5))
    expected = pytrec_eval.compute_aggregated_measure("gm_map", [v["gm_map"] for v in per_query.values()])
    assert gm["ap@20"][0] == pytest.approx(expected, rel=1e-9)


# ---------------------------------------------------------------------------- recframe evaluate --run --qrels --format trec


Run = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]


def random_trec_files(tmp_path: Path, seed: int = 11) -> tuple[Path, Path, Run, Qrels]:
    """A run and qrels with tied scores, unjudged documents, queries without relevant documents
    (judged but all 0), a run query absent from the qrels and a qrels query absent from the run;
    query ids that sort differently as text and as numbers (q10 before q2)."""
    rng = np.random.default_rng(seed)
    run: Run = {}
    qrels: Qrels = {}
    run_lines, qrels_lines = [], []
    for q in range(14):
        qid = f"q{q}"
        docs = [f"d{d}" for d in rng.choice(40, size=25, replace=False)]
        run[qid] = {doc: float(rng.integers(0, 6)) / 2 for doc in docs[: int(rng.integers(1, 21))]}  # many ties
        grades = (0, 0) if q % 5 == 0 else (0, 1, 2)  # q0, q5, q10: nothing relevant
        qrels[qid] = {doc: int(rng.choice(grades)) for doc in docs if rng.random() < 0.5} or {docs[-1]: 0}
    run["q_run_only"] = {"d1": 1.0, "d2": 0.5}
    qrels["q_qrels_only"] = {"d1": 1, "d3": 2}
    for qid, docs in run.items():
        run_lines += [f"{qid} Q0 {doc} {rank} {score} tag{rank % 2}" for rank, (doc, score) in enumerate(docs.items(), start=1)]
    for qid, judged in qrels.items():
        qrels_lines += [f"{qid} 0 {doc} {grade}" for doc, grade in judged.items()]
    return (
        write(tmp_path, "run.txt", "\n".join(run_lines) + "\n"),
        write(tmp_path, "qrels.txt", "\n".join(qrels_lines) + "\n"),
        run,
        qrels,
    )


def trec_lines(text: str) -> list[tuple[str, str, str]]:
    """(measure, qid, value) of trec_eval's output lines, checking the layout "%-22s\\t%s\\t..."."""
    out = []
    for line in text.splitlines():
        name, qid, value = line.split("\t")
        assert len(name) >= 22 and name == name.rstrip().ljust(22), line
        out.append((name.rstrip(), qid, value))
    return out


def test_cli_trec_format_is_trec_eval_q(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`recframe evaluate --format trec -q -m all_trec --profile trec_eval9` prints what
    `trec_eval -q -m all_trec` 9.0.8 prints: every (measure, query) value and every 'all' value
    equal pytrec_eval's to 1e-9 (relstring as text), queries in both files only, in text order,
    the measures in trec_eval's order."""
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval (pytrec-eval-terrier) is trec_eval's reference")
    from recframe import cli
    from recframe.trec_eval import Request

    run_path, qrels_path, run, qrels = random_trec_files(tmp_path)
    args = ["evaluate", "--run", str(run_path), "--qrels", str(qrels_path), "--format", "trec", "--profile", "trec_eval9"]
    assert cli.main([*args, "-m", "all_trec", "-q", "--precision", "12"]) == 0
    lines = trec_lines(capsys.readouterr().out)

    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(pytrec_eval.supported_measures)).evaluate(run)
    assert "q_run_only" not in theirs and "q_qrels_only" not in theirs  # trec_eval's intersection
    queries = [qid for _, qid, _ in lines if qid != "all"]
    assert list(dict.fromkeys(queries)) == sorted(theirs)  # q0, q1, q10, q11, ... as trec_eval
    printed = [name for m in Request(["all_trec"], version="9").chosen for name in m.names()]
    per_query = [name for name in printed if name not in ("runid", "num_q", "gm_map", "gm_bpref")]
    assert [name for name, qid, _ in lines if qid == queries[0]] == per_query
    checked = 0
    for name, qid, value in lines:
        if qid == "all":
            continue
        if name == "relstring":  # pytrec_eval returns no text: the relevance codes, checked here
            codes = {doc: qrels[qid].get(doc, -1) for doc in run[qid]}
            # by score (a C double in 9.0.8 as released; pytrec_eval's bundled trec_eval reads a
            # float, the same order on these halves), ties by docno in decreasing byte order
            ordered = sorted(sorted(run[qid], reverse=True), key=lambda doc: -run[qid][doc])
            assert value == "'" + "".join("-" if codes[d] == -1 else str(codes[d]) for d in ordered[:10]) + "'"
            continue
        if name.startswith("num_"):
            assert value.isdigit(), (name, qid, value)
        assert float(value) == pytest.approx(theirs[qid][name], abs=1e-9), (name, qid)
        checked += 1
    assert checked == len(theirs) * (len(per_query) - 1)

    summary = [(name, value) for name, qid, value in lines if qid == "all"]
    assert lines[-len(summary) :] == [(name, "all", value) for name, value in summary]  # 'all' lines come last
    assert summary[:2] == [("runid", run_path.read_text().splitlines()[-1].split()[-1]), ("num_q", str(len(theirs)))]
    assert [name for name, _ in summary] == [name for name in printed if name != "relstring"]
    for name, value in summary[2:]:
        assert float(value) == pytest.approx(
            pytrec_eval.compute_aggregated_measure(name, [theirs[q][name] for q in theirs]), abs=1e-9
        ), name

    # without -q and -m: trec_eval's official measures, 'all' lines only, 4 decimals
    assert cli.main(args) == 0
    short = trec_lines(capsys.readouterr().out)
    official = [name for m in Request([]).chosen for name in m.names()]
    assert [(n, q) for n, q, _ in short] == [(n, "all") for n in official]
    assert short[2][2] == dict(summary)["num_ret"] and len(short[-1][2].split(".")[1]) == 4


def test_cli_trec_format_metrics_and_cutoffs_as_trec_eval_m(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--metrics and --k choose the measures as trec_eval's -m does: no runid, num_q or num_rel;
    the profile defaults to trec_eval's; -q on a table is --per-user."""
    from recframe import cli

    run_path, qrels_path, _, _ = random_trec_files(tmp_path)
    files = ["evaluate", "--run", str(run_path), "--qrels", str(qrels_path)]
    assert cli.main([*files, "--format", "trec", "--metrics", "precision,ap", "--k", "3,5", "-c"]) == 0
    names = [name for name, _, _ in trec_lines(capsys.readouterr().out)]
    assert names == ["map", "gm_map", "P_3", "P_5", "map_cut_3", "map_cut_5"]
    assert cli.main([*files, "--format", "csv", "-q", "--profile", "trec_eval", "--metrics", "precision", "--k", "5"]) == 0
    per_user = pl.read_csv(io.StringIO(capsys.readouterr().out))
    assert per_user.columns == ["user_id", "n_relevant", "precision@5"] and per_user.height > 10


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["evaluate"], "--run FILE --qrels FILE"),  # neither RECS nor --run
        (["evaluate", "RECS.csv", "--run", "RUN", "--qrels", "QRELS"], "and --run"),
        (["evaluate", "RECS.csv", "--qrels", "QRELS"], "--qrels goes with --run"),
        (["evaluate", "--run", "RUN"], "add --qrels FILE"),
        (["evaluate", "--run", "RUN", "--qrels", "QRELS", "--truth", "QRELS"], "--truth and --run"),
        (["evaluate", "--run", "RUN", "--qrels", "QRELS", "--user", "qid"], "leave out --user"),
        (["evaluate", "--run", "RUN", "--qrels", "QRELS", "--format", "trec", "--by", "run"], "leave out --by"),
        (["evaluate", "--run", "RUN", "--qrels", "QRELS", "--format", "trec", "--metrics", "dcg"], "--metrics dcg: trec_eval"),
        (["evaluate", "--run", "RUN", "--qrels", "OTHER", "--format", "trec"], "trec_eval 10.0 stops here (exit 4)"),
        (["evaluate", "--run", "RUN", "--qrels", "OTHER", "--format", "trec", "--profile", "trec_eval9"], "no query has both"),
        # trec_eval 9.0.8 stops there with -c too (exit 7); 10.0 with -c scores the qrels' queries 0
        (
            ["evaluate", "--run", "RUN", "--qrels", "OTHER", "--format", "trec", "--profile", "trec_eval9", "-c"],
            "no query has both",
        ),
        (["curve", "RECS.csv", "--format", "trec"], "invalid choice"),
        (["curve", "RECS.csv", "-q"], "-q means per query"),  # -q was --quiet before
    ],
)
def test_cli_trec_usage_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], fragment: str
) -> None:
    from recframe import cli

    run_path, qrels_path, _, _ = random_trec_files(tmp_path)
    write(tmp_path, "other.txt", "nobody 0 d1 1\n")
    recs = tmp_path / "recs.csv"
    pl.DataFrame({"user_id": [1], "item_id": [1], "rank": [1]}).write_csv(recs)
    paths = {"RUN": run_path, "QRELS": qrels_path, "OTHER": tmp_path / "other.txt", "RECS.csv": recs}
    assert cli.main([str(paths.get(a, a)) for a in extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "Hint:" in captured.err
    assert fragment in captured.err, captured.err


@pytest.mark.parametrize(
    "text",
    [
        "q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\n",  # plain: the CSV reader's path
        "# a comment\nq1 Q0 d#1 1 2.5 bm25\n# another\nq1 Q0 d2 2 1.5 bm#25\n",  # plain, with '#': comments read as such
        "q1 Q0 d#1 1 2.5 bm25\n",  # a '#' inside a field only
        "# a comment\nq1 Q0 d1 1 2.5 bm25\n\nq1 Q0 d2 2 1.5 bm25 more junk\n",  # blank line, extra fields
        "q1  Q0 d1 1 2.5 bm25\nq1\tQ0\td2\t2\t1.5\tbm25\n",  # runs of spaces, tabs: the line reader
        " q1 Q0 d1 1 2.5 bm25 \nq1 Q0 d2 x 1.5 bm25\n",  # spaces at either end; a rank that is no number
        "q1 Q0 dé 1 2.5 bm25\n",  # not ASCII
    ],
)
@pytest.mark.parametrize("piece", [8, 1 << 24])  # a line or two at a time, or whole
def test_eager_reading_gives_the_lazy_frame(tmp_path: Path, text: str, piece: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read eagerly, a piece of the file at a time (whatever line makes the file not plain,
    in whichever piece), the frame is the lazy reader's; so it is with fewer columns, and
    with ids and tags as categories."""
    import recframe.trec

    monkeypatch.setattr(recframe.trec, "_PIECE", piece)
    path = write(tmp_path, "run.txt", text)
    whole = read_trec_run(path).collect()
    assert read_trec_run(path, eager=True).collect().equals(whole)
    columns = ["score", "user_id", "run"]
    for eager in (True, False):
        lean = read_trec_run(path, eager=eager, columns=columns, categorical=True).collect()
        assert lean.dtypes == [pl.Float64, pl.Categorical, pl.Categorical]
        assert lean.with_columns(pl.col("user_id", "run").cast(pl.String)).equals(whole.select(columns))


@pytest.mark.parametrize("columns", [["user_id", "docno"], [], ["score", "score"]])
def test_run_columns_are_named_or_refused(tmp_path: Path, columns: list[str]) -> None:
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 2.5 bm25\n")
    with pytest.raises(recframe.RecframeError, match=r"columns=.*: a run file's columns are user_id, item_id, rank, score, run"):
        read_trec_run(path, columns=columns)


@pytest.mark.parametrize(
    ("label", "text", "line"),
    [
        ("run", "q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5\n", 2),  # five fields
        ("run", "q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 high bm25\n", 2),  # a score that is no number
        ("qrels", "q1 0 d1 1\nq1 0 d2 1 extra\n", 2),  # five fields in a qrels line
        ("qrels", "q1 0 d1 1\nq1 0 d2 1.5\n", 2),  # a grade that is no whole number
    ],
)
def test_eager_reading_names_the_malformed_line(tmp_path: Path, label: str, text: str, line: int) -> None:
    path = write(tmp_path, f"{label}.txt", text)
    reader = read_trec_run if label == "run" else read_trec_qrels
    with pytest.raises(recframe.RecframeError, match=rf"{label} file .*, line {line}: "):
        reader(path, eager=True)
