"""The plots: drawn headless from real result frames (needs matplotlib: the whole module is
skipped without it, and the report tests in test_report_plot.py still run)."""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import recframe
from recframe import RecframeError
from test_report_plot import COMPARISON

# --- plots --------------------------------------------------------------------------------

matplotlib = pytest.importorskip("matplotlib", reason="plots need matplotlib: pip install 'recframe[plot]'")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


CURVE = pl.DataFrame({
    "model": ["A", "A", "A", "B", "B", "B"], "k": [1, 2, 3] * 2, "n_users": [3] * 6, "n_skipped": [0] * 6,
    "ndcg": [0.5, 0.6, 0.7, 0.2, 0.3, 0.4], "ndcg_lo": [0.4, 0.5, 0.6, 0.1, 0.2, 0.3],
    "ndcg_hi": [0.6, 0.7, 0.8, 0.3, 0.4, 0.5],
    "precision": [1.0, 0.5, 0.33, 0.0, 0.5, 0.33], "recall": [0.5, 0.5, 0.5, 0.0, 0.5, 0.5],
})  # fmt: skip


def test_plot_curve_draws_one_line_per_model_and_shades_the_interval():
    fig = recframe.plot.curve(CURVE, ["ndcg", "pr"])
    ndcg, pr = fig.axes[:2]
    assert [line.get_label() for line in ndcg.get_lines()] == ["A", "B"]
    assert ndcg.get_lines()[1].get_ydata().tolist() == [0.2, 0.3, 0.4]
    assert (ndcg.get_xlabel(), ndcg.get_ylabel(), ndcg.get_title()) == ("k", "ndcg", "ndcg by k")
    assert len(ndcg.collections) == 2  # one band per model
    assert (pr.get_xlabel(), pr.get_ylabel(), pr.get_title()) == ("recall", "precision", "precision-recall")
    assert pr.get_lines()[0].get_xdata().tolist() == [0.5, 0.5, 0.5]


def test_plot_curve_into_given_axes_and_lazy_input():
    fig, ax = plt.subplots()
    assert recframe.plot.curve(CURVE.lazy(), "ndcg", ax=ax) is fig
    assert len(ax.get_lines()) == 2


def test_plot_compare_marks_significance():
    fig = recframe.plot.compare(COMPARISON)
    (ax,) = fig.axes
    # the first row at the top
    assert {t.get_text(): t.get_position()[1] for t in ax.get_yticklabels()} == {"B: ndcg@10": 1, "B: rr@10": 0}
    assert ax.get_title() == "difference from A"
    # filled, and the dagger: significant after the correction (one meaning); the interval unadjusted
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "significant after correction",
        "not significant after correction",
    ]
    assert "not adjusted" in ax.get_xlabel()
    filled, hollow = ax.containers
    assert filled.lines[0].get_xdata().tolist() == [0.25]
    assert filled.lines[0].get_markerfacecolor() != "white" and hollow.lines[0].get_markerfacecolor() == "white"
    assert [(t.get_text(), t.xy) for t in ax.texts] == [("†", (0.375, 1))]


def test_plot_distribution_one_histogram_per_model():
    per_user = pl.DataFrame({"model": ["A", "A", "B", "B"], "user_id": [1, 2, 1, 2], "rr@10": [0.5, 1.0, None, 1.0]})
    fig = recframe.plot.distribution(per_user, "rr@10", bins=2)
    (ax,) = fig.axes
    assert [p.get_label() for p in ax.patches] == ["A", "B"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["A", "B"]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("rr@10", "users")


def test_plot_distribution_of_no_value_is_empty_without_a_warning():
    per_user = pl.DataFrame({"model": ["A"], "user_id": [1], "rr@10": [None]}, schema_overrides={"rr@10": pl.Float64})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warned of a legend without labels
        fig = recframe.plot.distribution(per_user, "rr@10")
    assert fig.axes[0].get_legend() is None and not fig.axes[0].patches


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: recframe.plot.curve(CURVE, "map"), r"metrics= names 'map'.*Hint"),
        (lambda: recframe.plot.curve(CURVE.drop("k")), r"no column 'k'.*Hint"),
        (lambda: recframe.plot.compare(CURVE), r"lacks the columns.*Hint"),
        (lambda: recframe.plot.distribution(CURVE, "ap@10"), r"metric='ap@10' is not a column.*Hint"),
    ],
)
def test_plot_bad_input(call, match):
    with pytest.raises(RecframeError, match=match):
        call()


def test_plot_compare_labels_lead_with_the_other_keys():
    per_user = pl.DataFrame({
        "model": ["A", "A", "B", "B"], "segment": ["cold", "warm", "cold", "warm"], "user_id": [1, 2, 1, 2],
        "n_relevant": [1] * 4, "rr@10": [0.5, 1.0, 1.0, 0.5],
    })  # fmt: skip
    fig = recframe.plot.compare(recframe.compare(per_user, by=["model", "segment"], baseline="A", test="randomization"))
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["cold / B: rr@10", "warm / B: rr@10"]


def test_plot_tradeoff_one_labelled_point_per_model_from_a_real_summary():
    recs = pl.DataFrame(
        {
            "model": ["pop"] * 4 + ["knn"] * 4,
            "user_id": [1, 1, 2, 2] * 2,
            "item_id": ["a", "b", "a", "b", "a", "c", "d", "e"],
            "rank": [1, 2] * 4,
            "relevance": [1, 0, 0, 1, 1, 0, 0, 0],
        }
    )
    items = pl.DataFrame({"item_id": ["a", "b", "c", "d", "e", "f"]})
    table = recframe.summary(recs, k=2, by="model", metrics=["ndcg", "gini"], items=items)
    fig = recframe.plot.tradeoff(table, x="gini@2", y="ndcg@2")
    axis = fig.axes[0]
    assert sorted(t.get_text() for t in axis.texts) == ["knn", "pop"]
    assert axis.get_xlabel() == "gini@2 (lower is better)" and axis.get_ylabel() == "ndcg@2 (higher is better)"
    with pytest.raises(RecframeError, match=r"x='novelty@2' is not a column of summary_frame .*'gini@2'"):
        recframe.plot.tradeoff(table, x="novelty@2", y="ndcg@2")


def test_plot_long_tail_cumulative_exposure_by_training_popularity():
    train = pl.DataFrame({"user_id": [1, 2, 3, 3, 4], "item_id": ["a", "a", "a", "b", "c"]})
    recs = pl.DataFrame(
        {
            "model": ["pop", "pop", "pop", "pop", "tail", "tail", "tail", "tail"],
            "user_id": [1, 1, 2, 2] * 2,
            "item_id": ["a", "b", "a", "b", "c", "d", "c", "b"],
            "score": [0.9, 0.5, 0.9, 0.5, 0.9, 0.8, 0.7, 0.1],
        }
    )
    fig = recframe.plot.long_tail(recs, train, k=2, rank=None, score="score")
    lines = {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in fig.axes[0].get_lines()}
    # training: a 3 users, then b and c 1 each (ties by item): 3/5, 4/5, 5/5
    assert lines["training"] == ([1, 2, 3], pytest.approx([0.6, 0.8, 1.0]))
    # pop shows a and b twice each; tail c twice (place 3), b once, d (cold: last, place 4) once
    assert lines["pop"] == ([1, 2], pytest.approx([0.5, 1.0]))
    assert lines["tail"] == ([2, 3, 4], pytest.approx([0.25, 0.75, 1.0]))
    assert fig.axes[0].get_xscale() == "log"
    with pytest.raises(RecframeError, match=r"train has no column 'user_id'"):
        recframe.plot.long_tail(recs, train.rename({"user_id": "u"}), score="score", rank=None)
