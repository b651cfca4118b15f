"""report: exact strings in each format (the plots, which need matplotlib, are in test_plot.py)."""

from __future__ import annotations

import importlib.util

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


@pytest.mark.skipif(
    importlib.util.find_spec("scipy") is None, reason="compare's paired t test needs scipy: pip install 'recframe[stats]'"
)
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


def test_missing_matplotlib_names_the_extra(monkeypatch):
    # no matplotlib needed: its import is made to fail
    monkeypatch.setitem(__import__("sys").modules, "matplotlib.pyplot", None)
    curve = pl.DataFrame({"model": ["A"], "k": [1], "ndcg": [0.5]})
    with pytest.raises(RecframeError, match=r'pip install "recframe\[plot\]"'):
        recframe.plot.curve(curve, "ndcg")
