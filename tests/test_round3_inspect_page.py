"""Round 3 of "every number right or refused" (issue 38), the page's comparison figure, the text
report by segment and recframe.inspect: a figure whose fill agrees with the interval it draws,
a text report that compares within each segment as the page does, cold-start users shown with an
empty history, user ids of the wrong type or a huge n refused or read in the user's words, and
no Polars PerformanceWarning reaching the user.

Every case here failed on the main it was found on.
"""

from __future__ import annotations

import contextlib
import html
import io
import re
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import recframe
from conftest import to_polars
from recframe import RecframeError, cli
from recframe.data import load_workflow

# ---------------------------------------------------------------------------- the data

WORKFLOW = load_workflow()
TRAIN, TEST = WORKFLOW.train, WORKFLOW.test
USERS = WORKFLOW.users.select("user_id", pl.col("cohort").alias("segment"))
COLD = sorted(set(TEST["user_id"].to_list()) - set(TRAIN["user_id"].to_list()))  # no training row


def _recs() -> pl.DataFrame:
    """Three models' top 10 for every user: the 10 most popular training items, a seeded random
    10, and a mix of the next most popular and random items."""
    rng = np.random.default_rng(0)
    popular = TRAIN.group_by("item_id").len().sort(["len", "item_id"], descending=[True, False])["item_id"].to_list()
    catalog = WORKFLOW.items["item_id"].to_list()
    rows = []
    for user in USERS["user_id"].to_list():
        lists = {
            "popular": popular[:10],
            "random": [int(i) for i in rng.choice(catalog, 10, replace=False)],
            "mix": list(dict.fromkeys([*popular[5:12], *(int(i) for i in rng.choice(catalog, 5, replace=False))]))[:10],
        }
        rows += [(model, user, item, rank) for model, items in lists.items() for rank, item in enumerate(items, 1)]
    return pl.DataFrame(rows, schema=["model", "user_id", "item_id", "rank"], orient="row")


RECS = _recs()
OPTIONS = {"truth": TEST, "relevance": "rating", "threshold": 4, "by": "model"}


def main(*argv: str | Path) -> tuple[int, str, str]:
    """Run the command line in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def assert_refused(code: int, err: str, *fragments: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Hint:" in lines[0] and "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("workflow")
    RECS.write_parquet(folder / "recs.parquet")
    TEST.write_parquet(folder / "test.parquet")
    TRAIN.write_parquet(folder / "train.parquet")
    USERS.write_parquet(folder / "users.parquet")
    WORKFLOW.items.write_parquet(folder / "items.parquet")
    return folder


FLAGS = ["--relevance", "rating", "--threshold", "4"]


def test_the_workflow_data_has_the_cold_users_the_issue_names():
    assert len(COLD) == 160 and 6 in COLD


# ---------------------------------------------------------------------------- item 5: the figure

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
    for p in points:
        excludes_zero = p["lo"] > 0 or p["hi"] < 0
        assert p["filled"] == excludes_zero, p
    significant = {f"{m}: {x}" for m, x in comparison.filter(pl.col("significant")).select("model", "metric").iter_rows()}
    assert {p["label"] for p in points if p["dagger"]} == significant
    return points


@needs_matplotlib
def test_the_comparison_figure_fills_a_point_exactly_when_its_drawn_interval_excludes_0():
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
    assert points["B: ndcg@10"]["filled"] and not points["B: ndcg@10"]["dagger"]
    assert points["C: ndcg@10"]["filled"] and points["C: ndcg@10"]["dagger"]
    assert not points["C: rr@10"]["filled"] and not points["C: rr@10"]["dagger"]
    legend = [t.get_text() for t in recframe.plot.compare(comparison).axes[0].get_legend().get_texts()]
    assert legend == ["interval excludes 0", "interval includes 0", "significant after correction"]


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
    # under the t test the interval excludes 0 exactly when p < alpha: a dagger is on a filled point
    assert all(p["filled"] for p in points if p["dagger"])


def test_the_page_caption_says_what_the_fill_and_the_marks_mean():
    page = recframe.report_page(RECS.filter(pl.col("user_id") <= 300), baseline="popular", k=10, seed=0, n_resamples=200,
                                **OPTIONS)  # fmt: skip
    comparison = re.search(r'<section id="comparison">(.*?)</section>', page, re.S)
    assert comparison is not None
    caption = re.sub(r"\s+", " ", html.unescape(comparison.group(1)))
    assert "not adjusted for multiple testing" in caption
    assert "filled when that interval excludes 0" in caption
    assert "significant after Holm's correction" in caption
    assert "filled points are significant" not in caption


# ---------------------------------------------------------------------------- item 8: n=2**70


@pytest.mark.parametrize("n", [2**70, np.uint64(2**64 - 1)])
def test_a_huge_n_chooses_every_user(n):
    small = RECS.filter(pl.col("user_id") <= 40)
    out = to_polars(recframe.inspect(small, k=2, n=n, **OPTIONS))
    assert sorted(out["user_id"].unique().to_list()) == sorted(small["user_id"].unique().to_list())
    # per segment too
    users = USERS.filter(pl.col("user_id") <= 40)
    out = to_polars(recframe.inspect(small, k=2, n=n, users=users, **{**OPTIONS, "by": ["model", "segment"]}))
    assert out["user_id"].n_unique() == 40


def test_a_huge_n_on_the_command_line(files, tmp_path):
    small = tmp_path / "small.parquet"
    RECS.filter(pl.col("user_id") <= 40).write_parquet(small)
    code, out, err = main("inspect", small, "--truth", files / "test.parquet", *FLAGS, "--by", "model", "--k", "2",
                          "--n", str(2**70), "--format", "csv", "--quiet")  # fmt: skip
    assert code == 0, err
    assert pl.read_csv(io.StringIO(out))["user_id"].n_unique() == 40


def test_n_below_1_is_refused_in_command_line_words(files):
    code, _, err = main("inspect", files / "recs.parquet", "--truth", files / "test.parquet", *FLAGS, "--n", "0", "--quiet")
    assert_refused(code, err, "--n 0", "--n 5")


# ---------------------------------------------------------------------------- item 13: cold users


def test_a_cold_start_user_is_shown_with_an_empty_history(constructor):
    out = to_polars(
        recframe.inspect(constructor(RECS), k=3, users=[6, 1], train=constructor(TRAIN),
                         **{**OPTIONS, "truth": constructor(TEST)})
    )  # fmt: skip
    sources = dict(out.group_by("user_id").agg(pl.col("source").unique().sort()).iter_rows())
    assert sources[6] == ["held_out", "recommended"]  # no history row: user 6 has no training row
    assert sources[1] == ["held_out", "history", "recommended"]
    expected = TRAIN.filter(pl.col("user_id") == 1)["item_id"].sort().to_list()
    assert out.filter((pl.col("user_id") == 1) & (pl.col("source") == "history"))["item_id"].sort().to_list() == expected
    assert out.filter(pl.col("source") == "recommended").height == 2 * 3 * 3
    view = recframe.side_by_side(out).to_html()
    user_6 = re.search(r"<h3>user_id 6</h3>(.*?)</section>", view, re.S)
    assert user_6 is not None
    assert re.search(
        r'<h4>History <span class="rf-count">\(0 relevant of 0\)</span></h4><ol><li class="rf-empty">', user_6.group(1)
    )


def test_cold_start_users_are_inspected_and_chosen_among():
    cold = COLD[:20]
    out = recframe.inspect(RECS, k=3, users=cold, train=TRAIN, select="worst", n=3, **OPTIONS)
    assert out["user_id"].n_unique() == 3 and set(out["user_id"].to_list()) <= set(cold)
    assert "history" not in out["source"].to_list()


def test_a_user_not_in_the_frame_is_named_with_train_as_without():
    for extra in ({}, {"train": TRAIN}):
        with pytest.raises(RecframeError, match=r"users=: user 999999 is not in the frame .*Hint"):
            recframe.inspect(RECS, users=[999999], **OPTIONS, **extra)
    with pytest.raises(RecframeError, match=r"users=: 2 of the 3 users given are not in the frame .*: 999999, 888888"):
        recframe.inspect(RECS, users=[999999, 6, 888888], train=TRAIN, **OPTIONS)


def test_train_is_still_checked_whole():
    with pytest.raises(RecframeError, match=r"train= has no rows"):
        recframe.inspect(RECS, users=[6], train=TRAIN.clear(), **OPTIONS)
    with pytest.raises(RecframeError, match=r"column 'user_id' of train= has 1 null"):
        recframe.inspect(RECS, users=[6], train=pl.concat([TRAIN, pl.DataFrame({"user_id": [None], "item_id": [1],
                         "rating": [5], "timestamp": [0]}, schema=TRAIN.schema)]), **OPTIONS)  # fmt: skip


def test_novelty_chooses_users_by_the_popularity_of_the_whole_train():
    # users=[ids] reads only their recommendations; popularity still counts every training user
    given = [u for u in USERS["user_id"].to_list() if u not in COLD][:30]
    recs = RECS.filter(pl.col("model") == "mix").with_columns(relevance=pl.lit(1))
    options = {"by": "model", "train": TRAIN, "empty_users": "zero"}
    per_user = recframe.per_user(recs, k=10, metrics=["novelty"], **options)
    expected = per_user.filter(pl.col("user_id").is_in(given)).sort("novelty@10", "user_id")["user_id"].head(3).to_list()
    out = recframe.inspect(recs, k=10, users=given, select="worst", metric="novelty@10", n=3, **options)
    assert set(out["user_id"].unique().to_list()) == set(expected)


def test_a_cold_start_user_on_the_command_line(files):
    code, out, err = main("inspect", files / "recs.parquet", "--truth", files / "test.parquet", "--train",
                          files / "train.parquet", *FLAGS, "--by", "model", "--k", "2", "--users", "6", "--format", "csv",
                          "--quiet")  # fmt: skip
    assert code == 0, err
    table = pl.read_csv(io.StringIO(out))
    assert table["user_id"].unique().to_list() == [6] and "history" not in table["source"].to_list()
    code, _, err = main("inspect", files / "recs.parquet", "--truth", files / "test.parquet", "--train",
                        files / "train.parquet", *FLAGS, "--users", "999999", "--quiet")  # fmt: skip
    assert_refused(code, err, "--users", "user 999999 is not in the frame")


# ---------------------------------------------------------------------------- item 14: id types


@pytest.mark.parametrize("bad, example", [(1.5, "[1, 2, 3]"), (67.0, "[67]"), (np.float64(67.0), "[67]")])
def test_a_float_id_on_an_integer_user_column_names_users_and_the_dtype(constructor, bad, example):
    with pytest.raises(RecframeError) as caught:
        recframe.inspect(constructor(RECS), users=[1, bad], **{**OPTIONS, "truth": constructor(TEST)})
    message = str(caught.value)
    assert message.startswith(f"users= holds {float(bad)!r} (float)"), message
    assert "Int64" in message and f"users={example}" in message
    assert "frame=" not in message and "scan_parquet" not in message


def test_an_id_outside_the_column_range_is_refused():
    with pytest.raises(RecframeError, match=r"users= holds 1180591620717411303424, outside the range of .*Int64.*Hint"):
        recframe.inspect(RECS, users=[2**70], **OPTIONS)
    unsigned = RECS.with_columns(pl.col("user_id").cast(pl.UInt32))
    with pytest.raises(RecframeError, match=r"users= holds -1, outside the range of the user column 'user_id' \(UInt32: 0"):
        recframe.inspect(unsigned, users=[-1], **{**OPTIONS, "truth": TEST.with_columns(pl.col("user_id").cast(pl.UInt32))})


# ---------------------------------------------------------------------------- item 15: report by segment


def test_the_text_report_compares_within_each_segment_as_the_page_does(files):
    args = ["report", files / "recs.parquet", "--truth", files / "test.parquet", "--users", files / "users.parquet",
            *FLAGS, "--by", "model,segment", "--baseline", "popular", "--ci", "0.95", "--k", "10",
            "--metrics", "ndcg", "--seed", "0", "--quiet"]  # fmt: skip
    code, out, err = main(*args)
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
    code, _, err = main(*args, "--out", page)
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


# ---------------------------------------------------------------------------- item 19: no PerformanceWarning


def test_inspect_of_a_lazy_users_frame_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = recframe.inspect(RECS.lazy(), k=2, users=pl.LazyFrame({"user_id": [1, 6]}), **OPTIONS).collect()
        assert sorted(out["user_id"].unique().to_list()) == [1, 6]
        segments = USERS.lazy().filter(pl.col("user_id") <= 60)
        out = recframe.inspect(RECS.lazy(), k=2, n=1, users=segments, **{**OPTIONS, "by": ["model", "segment"]}).collect()
        assert out["segment"].n_unique() == out["user_id"].n_unique()


def test_report_with_a_users_file_warns_nothing(files, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code, _, err = main("report", files / "recs.parquet", "--truth", files / "test.parquet", "--users",
                            files / "users.parquet", *FLAGS, "--by", "model,segment", "--baseline", "popular", "--k", "10",
                            "--n-resamples", "200", "--out", tmp_path / "page.html")  # fmt: skip
    assert code == 0, err
    assert "Warning" not in err and "warning" not in err


# ---------------------------------------------------------------------------- item 18: --max-users


@pytest.mark.parametrize("value", ["-3", "0"])
def test_max_users_is_checked_without_the_page(files, value):
    code, _, err = main("inspect", files / "recs.parquet", "--truth", files / "test.parquet", *FLAGS, "--max-users", value,
                        "--quiet")  # fmt: skip
    assert_refused(code, err, f"--max-users {value}")
