"""One formula per metric (issue 39): every path that produces a metric's value finishes it
through the registry, so a change to a metric's finish changes recframe.summary, per_user and
the trec_eval drop-in's fast path alike (the drop-in computes the term columns its own way)."""

from __future__ import annotations

import dataclasses

import polars as pl
import pytest

import recframe
import recframe.trec_eval as trec_eval
from recframe.metrics import REGISTRY
from recframe.trec import WHOLE

# three queries with graded, unjudged (-1) and unpooled documents, a tie in score
RUN = pl.DataFrame(
    {
        "user_id": ["q1"] * 6 + ["q2"] * 5 + ["q3"] * 4,
        "item_id": ["a", "b", "c", "d", "e", "f", "a", "b", "c", "d", "e", "x", "y", "z", "w"],
        "score": [6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 9.0, 8.0, 8.0, 7.0, 1.0, 4.0, 3.0, 2.0, 1.0],
    }
)
QRELS = pl.DataFrame(
    {
        "user_id": ["q1", "q1", "q1", "q1", "q2", "q2", "q2", "q2", "q3", "q3", "q3"],
        "item_id": ["b", "d", "e", "g", "a", "c", "e", "h", "y", "w", "v"],
        "relevance": [2, 1, 0, -1, 1, 2, 0, 1, 1, 0, 2],
    }
)
# registry metric -> (the summary column, the drop-in's measure)
MEASURES = {"precision": ("precision@5", "P_5"), "ap": (f"ap@{WHOLE}", "map"), "ndcg": ("ndcg@5", "ndcg_cut_5")}


def _drop_in() -> dict[tuple[str, str], float]:
    """(measure, query or "all") -> value, as the drop-in's one-pass path prints them."""
    request = trec_eval.Request(["P.5", "map", "ndcg_cut.5"], per_query=True, decimals=12)
    text = trec_eval._evaluate_fast(RUN, QRELS, request, "tag")
    assert text is not None  # the one-pass path, not the general one through per_user
    assert text == trec_eval.evaluate(RUN.with_columns(run=pl.lit("tag")).lazy(), QRELS.lazy(), request)
    return {(name.strip(), query): float(value) for name, query, value in (line.split("\t") for line in text.splitlines())}


def _engine() -> tuple[dict[str, float], pl.DataFrame]:
    run, k, metrics = RUN.select("user_id", "item_id", "score"), [5, WHOLE], list(MEASURES)
    means = recframe.summary(run, k, metrics, truth=QRELS, score="score", profile="trec_eval").row(0, named=True)
    return means, recframe.per_user(run, k, metrics, truth=QRELS, score="score", profile="trec_eval").sort("user_id")


@pytest.mark.parametrize("metric", list(MEASURES))
def test_a_registry_finish_changes_summary_per_user_and_the_drop_in(metric: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Doubling a metric's finish in the registry doubles summary's mean, per_user's values and
    the drop-in's numbers (per query and over all), and no other metric's."""
    column, name = MEASURES[metric]
    means, users = _engine()
    printed = _drop_in()
    assert means[column] > 0 and printed[name, "all"] == pytest.approx(means[column], abs=1e-10)
    real = REGISTRY[metric]
    monkeypatch.setitem(REGISTRY, metric, dataclasses.replace(real, finish=lambda k, o: real.finish(k, o) * 2))
    doubled_means, doubled_users = _engine()
    doubled = _drop_in()
    assert doubled_means[column] == pytest.approx(2 * means[column])
    assert doubled_users[column].to_list() == pytest.approx([2 * x for x in users[column].to_list()])
    for (measure, query), value in printed.items():
        expected = 2 * value if measure == name else value
        assert doubled[measure, query] == pytest.approx(expected, abs=1e-10), (measure, query)


@pytest.mark.parametrize("version", ["10", "9"])
def test_the_drop_in_computes_every_registry_term_it_reads(version: str) -> None:
    """The one-pass path defers to the general one where a finish reads a term column it does
    not compute; for every measure of all_trec it computes them all (it does not defer)."""
    request = trec_eval.Request(["all_trec"], per_query=True, version=version)  # type: ignore[arg-type]
    assert trec_eval._evaluate_fast(RUN, QRELS, request, "tag") == trec_eval._evaluate_generic(RUN, QRELS, request, "tag", None)


def test_the_gain_frame_reads_a_run_in_blocks_as_it_reads_any_order() -> None:
    """The drop-in's gain frame (nDCG's relatives: G, ndcg_rel, Rndcg, rbp) looks each query's
    id up once per block of the run's rows (its order); rows in any other order give the same
    frame, row by row, and the measures built on it the same text."""
    request = trec_eval.Request(["G", "ndcg_rel", "Rndcg", "rbp"], per_query=True, decimals=12)
    judged = QRELS.select("user_id", "item_id", "relevance")
    codes = trec_eval.ranked_codes(RUN, judged, request).filter(pl.col("position").is_not_null())
    counts = trec_eval.level_counts(judged)
    assert codes["user_id"].rle().struct.field("value").is_unique().all()  # the run's order: blocks
    shuffled = codes.sample(fraction=1.0, shuffle=True, seed=3)
    assert not shuffled["user_id"].rle().struct.field("value").is_unique().all()
    for measure in (trec_eval.Measure(trec_eval.FAMILY["G"]), trec_eval.Measure(trec_eval.FAMILY["rbp"], "p=0.8")):
        for every_position, q1 in ((True, [1, 2, 3, 4, 5, 6, 7]), (False, [1, 2, 3, 4])):
            # q1: 6 retrieved, then one more; or the 2 ideal positions, one more, and d's gain at 4
            in_blocks = trec_eval._gain_frame(measure, codes, counts, every_position)
            assert in_blocks.filter(pl.col("user_id") == "q1")["position"].to_list() == q1
            assert in_blocks.equals(trec_eval._gain_frame(measure, shuffled, counts, every_position))
    text = trec_eval.evaluate(RUN.with_columns(run=pl.lit("tag")).lazy(), QRELS.lazy(), request)
    assert "Rndcg" in text and "ndcg_rel" in text and text == trec_eval._evaluate_generic(RUN, QRELS, request, "tag", None)
