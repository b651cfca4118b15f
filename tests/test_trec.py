"""TREC run and qrels files: parsing by hand, malformed lines, and a round trip through files
evaluated by recframe (profile="trec_eval") and by trec_eval itself (pytrec_eval)."""

from __future__ import annotations

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
        ("q1 Q0 d1 1 2.5 bm25 extra\n", 1, 1),  # seven fields
        ("# c\nq1 Q0 d1 one 2.5 bm25\nq1 Q0 d2 2.5 1 bm25\n", 2, 2),  # ranks not whole numbers
        ("q1 Q0 d1 1 high bm25\n", 1, 1),  # score not a number
        ("q1 Q0 d1 1 nan bm25\nq1 Q0 d2 2 inf bm25\n", 1, 2),  # scores not finite
    ],
)
def test_malformed_run_lines_are_named_with_their_number(tmp_path: Path, text: str, line: int, count: int) -> None:
    path = write(tmp_path, "run.txt", text)
    with pytest.raises(recframe.RecframeError, match=rf"run file .*run\.txt', line {line}: .*\({count} malformed line"):
        read_trec_run(path)


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
        profile="trec_eval",
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
        profile="trec_eval",
        aggregate="gmean",
    ).collect()
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"gm_map"}).evaluate(run)  # per query: log(max(map, 1e-5))
    expected = pytrec_eval.compute_aggregated_measure("gm_map", [v["gm_map"] for v in per_query.values()])
    assert gm["ap@20"][0] == pytest.approx(expected, rel=1e-9)
