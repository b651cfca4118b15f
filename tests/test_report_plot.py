"""report: exact strings in each format. plot: what is drawn (lines, labels), headless."""

from __future__ import annotations

import polars as pl
import pytest

import recframe
from recframe import RecframeError

SUMMARY = pl.DataFrame({
    "model": ["A", "B"], "n_users": [3, 3], "n_skipped": [1, 1],
    "ndcg@10": [0.5, 0.75], "ndcg@10_std": [0.1, 0.2], "ndcg@10_lo": [0.25, 0.5], "ndcg@10_hi": [0.625, 1.0],
    "rr@10": [0.5, 0.5],
})  # fmt: skip

COMPARISON = pl.DataFrame({
    "baseline": ["A", "A"], "model": ["B", "B"], "metric": ["ndcg@10", "rr@10"], "n_pairs": [3, 3],
    "n_dropped_baseline": [0, 0], "n_dropped_model": [0, 0],
    "baseline_mean": [0.5, 0.5], "model_mean": [0.75, 0.5], "delta": [0.25, 0.0],
    "delta_lo": [0.125, -0.25], "delta_hi": [0.375, 0.25], "rel_delta": [0.5, 0.0],
    "p_value": [0.0001, 1.0], "p_adjusted": [0.0002, 1.0], "significant": [True, False],
})  # fmt: skip


def test_markdown_summary_with_markers():
    assert recframe.report(SUMMARY, precision=2, compare=COMPARISON) == (
        "| model | n_users | n_skipped | ndcg@10 | rr@10 |\n"
        "|:--|--:|--:|--:|--:|\n"
        "| A | 3 | 1 | 0.50 [0.25, 0.62] | **0.50** |\n"
        "| B | 3 | 1 | **0.75**† [0.50, 1.00] | **0.50** |\n"
        "\n"
        "† significantly different from the baseline A (adjusted p-value below alpha)\n"
    )


def test_html_summary():
    assert recframe.report(SUMMARY.select("model", "n_users", "rr@10"), "html", precision=1) == (
        "<table>\n<thead>\n<tr><th>model</th><th>n_users</th><th>rr@10</th></tr>\n</thead>\n<tbody>\n"
        '<tr><td>A</td><td style="text-align: right">3</td><td style="text-align: right"><strong>0.5</strong></td></tr>\n'
        '<tr><td>B</td><td style="text-align: right">3</td><td style="text-align: right"><strong>0.5</strong></td></tr>\n'
        "</tbody>\n</table>\n"
    )


def test_latex_comparison():
    assert recframe.report(COMPARISON, "latex", precision=3) == (
        "\\begin{tabular}{llrrrrrrr}\n"
        "\\toprule\n"
        "model & metric & n\\_pairs & baseline\\_mean & model\\_mean & delta & rel\\_delta & p\\_value & p\\_adjusted \\\\\n"
        "\\midrule\n"
        "B & ndcg@10 & 3 & 0.500 & 0.750 & 0.250$^{\\dagger}$ [0.125, 0.375] & +50.0\\% & \\textless{}0.001 & \\textless{}0.001 \\\\\n"
        "B & rr@10 & 3 & 0.500 & 0.500 & 0.000 [-0.250, 0.250] & +0.0\\% & 1.000 & 1.000 \\\\\n"
        "\\bottomrule\n"
        "\\end{tabular}\n"
        "$^{\\dagger}$ significantly different from A (adjusted p-value below alpha)\n"
    )


def test_markdown_comparison_bolds_the_best_delta_per_metric():
    two = pl.concat([COMPARISON, COMPARISON.with_columns(model=pl.lit("C"), delta=pl.Series([0.5, -0.1]),
                                                         significant=pl.lit(False))])  # fmt: skip
    text = recframe.report(two.sort("metric", "model"), precision=2)
    assert "| B | ndcg@10 | 3 | 0.50 | 0.75 | 0.25† [0.12, 0.38] |" in text
    assert "| C | ndcg@10 | 3 | 0.50 | 0.75 | **0.50** [0.12, 0.38] |" in text
    assert "| B | rr@10 | 3 | 0.50 | 0.50 | **0.00** [-0.25, 0.25] |" in text


def test_report_works_on_real_results_of_every_type():
    from recframe.data import load_sample

    recs, truth = load_sample("pandas")
    kw = dict(truth=truth, k=10, metrics=["ndcg"], score="score", relevance="rating", threshold=4, by="model")
    summary = recframe.summary(recs, ci=0.95, seed=0, **kw)
    comparison = recframe.compare(recframe.per_user(recs, **kw), baseline="popular")
    text = recframe.report(summary, compare=comparison)
    assert "| personal | 287 | 13 | 0 | 13 | 0 | **0.775**† [" in text


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"format": "rst"}, r"format='rst' .*Hint"),
        ({"precision": -1}, r"precision=-1 .*Hint"),
    ],
)
def test_report_bad_arguments(kwargs, match):
    with pytest.raises(RecframeError, match=match):
        recframe.report(SUMMARY, **kwargs)


def test_report_needs_metric_columns():
    with pytest.raises(RecframeError, match=r"no metric column.*Hint"):
        recframe.report(pl.DataFrame({"a": [1]}))


# --- plots --------------------------------------------------------------------------------

matplotlib = pytest.importorskip("matplotlib")
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
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["significant", "not significant"]
    filled, hollow = ax.containers
    assert filled.lines[0].get_xdata().tolist() == [0.25]
    assert filled.lines[0].get_markerfacecolor() != "white" and hollow.lines[0].get_markerfacecolor() == "white"


def test_plot_distribution_one_histogram_per_model():
    per_user = pl.DataFrame({"model": ["A", "A", "B", "B"], "user_id": [1, 2, 1, 2], "rr@10": [0.5, 1.0, None, 1.0]})
    fig = recframe.plot.distribution(per_user, "rr@10", bins=2)
    (ax,) = fig.axes
    assert [p.get_label() for p in ax.patches] == ["A", "B"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["A", "B"]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("rr@10", "users")


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


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "matplotlib.pyplot", None)  # import now fails
    with pytest.raises(RecframeError, match=r'pip install "recframe\[plot\]"'):
        recframe.plot.curve(CURVE, "ndcg")


def test_plot_compare_labels_lead_with_the_other_keys():
    matplotlib = pytest.importorskip("matplotlib", reason="plots need matplotlib: pip install 'recframe[plot]'")
    matplotlib.use("Agg")
    per_user = pl.DataFrame({
        "model": ["A", "A", "B", "B"], "segment": ["cold", "warm", "cold", "warm"], "user_id": [1, 2, 1, 2],
        "n_relevant": [1] * 4, "rr@10": [0.5, 1.0, 1.0, 0.5],
    })  # fmt: skip
    fig = recframe.plot.compare(recframe.compare(per_user, by=["model", "segment"], baseline="A", test="randomization"))
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["cold / B: rr@10", "warm / B: rr@10"]
