"""How a comparison's significance is marked (issues 38 and 60): the comparison figure has one
meaning of significance, after the correction: a point is filled and daggered exactly when its
row is significant after it, its interval drawn is the unadjusted one and named so, the page's
caption says so, and the text report compares within each segment, as
the page does, with its dagger per (model, segment).
"""

from __future__ import annotations

import html
import re
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import recframe
from conftest import run_cli
from recframe import RecframeError
from workflow_recs import FLAGS, OPTIONS, RECS, USERS, write_files


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_files(tmp_path_factory.mktemp("workflow"))


try:
    import matplotlib
except ImportError:  # pragma: no cover - matplotlib is in the plot extra
    matplotlib = None
else:
    matplotlib.use("Agg")


needs_matplotlib = pytest.mark.skipif(matplotlib is None, reason="the figure needs matplotlib: pip install 'recframe[plot]'")


def drawn_points(fig) -> list[dict]:
    """What the comparison figure draws, read from its artists (not its pixels): per point its
    label, delta, the interval drawn, whether it is filled, and whether it has the dagger."""
    (ax,) = fig.axes
    labels = {round(y): t.get_text() for y, t in zip(ax.get_yticks(), ax.get_yticklabels())}
    daggers = {round(t.xy[1]) for t in ax.texts if t.get_text() == "†"}
    points = []
    for container in ax.containers:
        data_line, _caps, (bars,) = container.lines
        face = matplotlib.colors.to_rgba(data_line.get_markerfacecolor())
        for x, y, segment in zip(data_line.get_xdata(), data_line.get_ydata(), bars.get_segments()):
            (x0, _), (x1, _) = segment
            points.append({
                "label": labels[round(y)], "delta": x, "lo": min(x0, x1), "hi": max(x0, x1),
                "filled": face != matplotlib.colors.to_rgba("white"), "dagger": round(y) in daggers,
            })  # fmt: skip
    return points


def assert_consistent(fig, comparison: pl.DataFrame) -> list[dict]:
    points = drawn_points(fig)
    assert len(points) == comparison.filter(pl.col("delta").is_not_null()).height
    significant = {f"{m}: {x}" for m, x in comparison.filter(pl.col("significant")).select("model", "metric").iter_rows()}
    assert {p["label"] for p in points if p["dagger"]} == significant
    assert {p["label"] for p in points if p["filled"]} == significant  # one meaning: the fill is the dagger's
    assert "not adjusted" in fig.axes[0].get_xlabel()
    return points


@needs_matplotlib
def test_the_comparison_figure_fills_a_point_exactly_when_it_is_significant_after_correction():
    # B's ndcg: its 95% interval excludes 0 (p = 0.02), but Holm over the three rows makes it
    # 0.06, not significant; C's ndcg is significant after the correction; C's rr holds 0
    comparison = pl.DataFrame({
        "baseline": ["A"] * 3, "model": ["B", "C", "C"], "metric": ["ndcg@10", "ndcg@10", "rr@10"],
        "n_pairs": [50] * 3, "n_dropped_baseline": [0] * 3, "n_dropped_model": [0] * 3,
        "baseline_mean": [0.5] * 3, "model_mean": [0.55, 0.7, 0.51], "delta": [0.05, 0.2, 0.01],
        "delta_lo": [0.01, 0.1, -0.05], "delta_hi": [0.09, 0.3, 0.07], "rel_delta": [0.1, 0.4, 0.02],
        "p_value": [0.02, 0.0001, 0.7], "p_adjusted": [0.06, 0.0003, 0.7], "significant": [False, True, False],
    })  # fmt: skip
    points = {p["label"]: p for p in assert_consistent(recframe.plot.compare(comparison), comparison)}
    # B's ndcg: its unadjusted interval excludes 0, but it is not significant after Holm: hollow
    assert not points["B: ndcg@10"]["filled"] and not points["B: ndcg@10"]["dagger"]
    assert points["B: ndcg@10"]["lo"] > 0
    assert points["C: ndcg@10"]["filled"] and points["C: ndcg@10"]["dagger"]
    assert not points["C: rr@10"]["filled"] and not points["C: rr@10"]["dagger"]
    legend = [t.get_text() for t in recframe.plot.compare(comparison).axes[0].get_legend().get_texts()]
    assert legend == ["significant after correction", "not significant after correction"]


@needs_matplotlib
def test_the_figure_of_a_real_comparison_agrees_with_itself():
    per_user = recframe.per_user(RECS, k=10, metrics=["ndcg", "recall", "precision", "rr"], **OPTIONS)
    # a fourth model close to popular: its deltas are small, some significant only before Holm
    rng = np.random.default_rng(3)
    near = per_user.filter(pl.col("model") == "popular").with_columns(model=pl.lit("near"))
    near = near.with_columns(
        (pl.col(c) + pl.Series(rng.normal(0.006, 0.12, near.height))).alias(c)
        for c in ("ndcg@10", "recall@10", "precision@10", "rr@10")
    )
    comparison = recframe.compare(pl.concat([per_user, near]), baseline="popular", test="paired_t")
    unadjusted_only = comparison.filter((pl.col("p_value") < 0.05) & ~pl.col("significant"))
    assert unadjusted_only.height >= 1  # the case the figure got wrong
    points = assert_consistent(recframe.plot.compare(comparison), comparison)
    # the case of two meanings before: a hollow point whose unadjusted interval excludes 0
    assert any(not p["filled"] and (p["lo"] > 0 or p["hi"] < 0) for p in points)


def test_the_page_caption_gives_the_fill_and_the_marks_one_meaning():
    page = recframe.report_page(RECS.filter(pl.col("user_id") <= 300), baseline="popular", k=10, seed=0, n_resamples=200,
                                **OPTIONS)  # fmt: skip
    comparison = re.search(r'<section id="comparison">(.*?)</section>', page, re.S)
    assert comparison is not None
    caption = re.sub(r"\s+", " ", html.unescape(comparison.group(1)))
    assert "not adjusted for multiple testing" in caption
    assert "A filled point" in caption and "is significant after Holm's correction" in caption
    assert "A hollow point is not, even where its unadjusted interval excludes 0" in caption
    assert "filled when that interval excludes 0" not in caption


def test_the_text_report_compares_within_each_segment_as_the_page_does(files):
    args = ["report", files / "recs.parquet", "--truth", files / "test.parquet", "--users", files / "users.parquet",
            *FLAGS, "--by", "model,segment", "--baseline", "popular", "--ci", "0.95", "--k", "10",
            "--metrics", "ndcg", "--seed", "0", "--quiet"]  # fmt: skip
    code, out, err = run_cli(*args)
    assert code == 0, err
    options = {**OPTIONS, "users": USERS, "by": ["model", "segment"]}
    per_user = recframe.per_user(RECS, k=10, metrics=["ndcg"], **options)
    comparison = recframe.compare(per_user, by=["model", "segment"], baseline="popular")
    significant = set(comparison.filter(pl.col("significant")).select("model", "segment").iter_rows())
    assert significant  # some and not all: the marks are per (model, segment)
    marked = set()
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) > 2 and cells[0] in ("popular", "random", "mix"):
            if "†" in cells[-1]:
                marked.add((cells[0], cells[1]))
    assert marked == significant
    assert len(significant) < comparison.height
    # the page takes the same flags
    page = files / "page.html"
    code, _, err = run_cli(*args, "--out", page)
    assert code == 0, err


def test_report_marks_and_lays_out_a_comparison_within_segments():
    options = {**OPTIONS, "users": USERS, "by": ["model", "segment"]}
    summary = recframe.summary(RECS, k=10, metrics=["ndcg"], **options)
    comparison = recframe.compare(recframe.per_user(RECS, k=10, metrics=["ndcg"], **options), by=["model", "segment"],
                                  baseline="popular")  # fmt: skip
    text = recframe.report(comparison)
    assert text.startswith("| segment | model | metric | n_pairs |")
    assert "| 2023-H1 | mix | ndcg@10 |" in text
    # a summary by model and segment with a comparison pooled over the segments: refused
    pooled = recframe.compare(recframe.per_user(RECS, k=10, metrics=["ndcg"], **OPTIONS), baseline="popular")
    with pytest.raises(RecframeError, match=r"compare= marks .*its keys are \['model', 'segment'\].*Hint: .*by="):
        recframe.report(summary, compare=pooled)


def test_report_with_a_users_file_warns_nothing(files, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code, _, err = run_cli("report", files / "recs.parquet", "--truth", files / "test.parquet", "--users",
                            files / "users.parquet", *FLAGS, "--by", "model,segment", "--baseline", "popular", "--k", "10",
                            "--n-resamples", "200", "--out", tmp_path / "page.html")  # fmt: skip
    assert code == 0, err
    assert "Warning" not in err and "warning" not in err
