"""The page's data step (recframe.reporting._page.data): what the page shows, collected without any HTML,
holds the numbers of the public calls it stands for."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import recframe
from recframe.data import load_sample
from recframe.reporting._page import data

RECS, TRUTH = load_sample()
OPTIONS = {"score": "score", "relevance": "rating", "threshold": 4, "by": "model", "seed": 0}


@pytest.fixture(scope="module")
def collected() -> data.PageData:
    request = data.request(RECS, TRUTH, "popular", 10, 0.95, None, None, None, None, ["ndcg", "recall"], 3, dict(OPTIONS))
    return data.collect(request)  # no figure, no HTML


def test_the_collected_summary_is_recframe_summary(collected):
    want = recframe.summary(RECS, truth=TRUTH, k=10, metrics=["ndcg", "recall"], ci=0.95, **OPTIONS)
    assert_frame_equal(collected.summary, want, check_exact=False, rel_tol=1e-12)
    assert collected.summary.filter(pl.col("model") == "popular")["ndcg@10"].item() == pytest.approx(
        want.filter(pl.col("model") == "popular")["ndcg@10"].item(), rel=1e-12
    )


def test_the_collected_per_user_frame_and_comparison_are_recframe_per_user_and_compare(collected):
    lists = {name: value for name, value in OPTIONS.items() if name != "seed"}
    per_user = recframe.per_user(RECS, truth=TRUTH, k=10, metrics=["ndcg", "recall"], **lists)
    assert_frame_equal(collected.per_user, per_user, check_exact=False, rel_tol=1e-12)
    want = recframe.compare(per_user, by="model", baseline="popular", seed=0)
    got = collected.comparison
    assert got is not None and collected.baseline == "popular"
    assert_frame_equal(got, want, check_exact=False, rel_tol=1e-12)
    assert got.filter(pl.col("metric") == "ndcg@10")["delta"].item() == pytest.approx(
        want.filter(pl.col("metric") == "ndcg@10")["delta"].item(), rel=1e-12
    )
    assert collected.significant == {(m, metric) for m, metric in want.filter("significant").select("model", "metric").rows()}


def test_the_rest_of_the_page_is_collected_as_values(collected):
    assert collected.primary == "ndcg@10" and collected.shown == ["ndcg@10", "recall@10"]
    zeros = collected.distributions[0][1].filter(pl.col("model") == "popular")["zero"].item()
    per_user = collected.per_user.filter(pl.col("model") == "popular")
    assert zeros == per_user.filter(pl.col("ndcg@10") == 0).height
    # the quantile bands: numpy's percentiles of the same users' values, as summary's pNN
    band = collected.distributions[0][1].filter(pl.col("model") == "popular").row(0, named=True)
    values = per_user["ndcg@10"].drop_nulls().to_numpy()
    assert [band[f"p{q}"] for q in (10, 25, 75, 90)] == pytest.approx(list(np.percentile(values, [10, 25, 75, 90])), abs=1e-12)
    direct = recframe.summary(RECS, truth=TRUTH, k=10, metrics=["ndcg"], aggregate="p90", **OPTIONS)
    assert band["p90"] == pytest.approx(direct.filter(pl.col("model") == "popular")["ndcg@10"].item(), abs=1e-12)
    assert [{k: v for k, v in d.items() if k != "sha256"} for d in collected.inputs] == [
        {"input": "recs", "rows": RECS.height}, {"input": "truth", "rows": TRUTH.height}
    ]  # fmt: skip
    assert [len(d["sha256"]) for d in collected.inputs] == [64, 64] and collected.inputs[0]["sha256"] == data.frame_hash(RECS)
    assert "no NaN score in 'score'" in collected.checks
    assert ["k", "10", "default"] in collected.conventions  # k=10 is report_page's default: not "given"
    assert ["seed", 0, "given"] in collected.conventions
    assert set(collected.examples) == {"worst", "disagree", "random"} and collected.examples_error is None
    shown = {u for ids in collected.examples.values() for u in ids}
    assert set(collected.inspected["user_id"].unique()) == shown
    assert collected.curve["k"].max() == 10 and collected.curve_metrics == ["ndcg"]


USERS = (
    TRUTH.select("user_id")
    .unique()
    .with_columns(segment=pl.when(pl.col("user_id") % 3 == 0).then(pl.lit("new")).otherwise(pl.lit("returning")))
)
SEGMENTED = {**OPTIONS, "users": USERS, "by": ["model", "segment"], "n_resamples": 200}


@pytest.fixture(scope="module")
def segmented() -> data.PageData:
    """The sample with a segment (a user attribute) and a baseline, without intervals."""
    request = data.request(RECS, TRUTH, "popular", 10, None, None, None, None, None, ["ndcg", "recall"], 3, dict(SEGMENTED))
    return data.collect(request)


def test_each_segment_compares_the_models_with_the_baseline_as_compare_does(segmented):
    lists = {name: value for name, value in SEGMENTED.items() if name not in ("seed", "n_resamples")}
    per_user = recframe.per_user(RECS, truth=TRUTH, k=10, metrics=["ndcg", "recall"], **lists)
    want = recframe.compare(per_user, by=["model", "segment"], baseline="popular", seed=0)
    got = segmented.segment_comparisons["segment"]
    assert isinstance(got, pl.DataFrame) and got.height == 2 * 2  # segment x metric (one model against popular)
    assert_frame_equal(got, want, check_exact=False, rel_tol=1e-12)
    new = got.filter((pl.col("segment") == "new") & (pl.col("metric") == "ndcg@10")).row(0, named=True)
    users = per_user.join(USERS, on="user_id").filter(pl.col("segment") == "new")
    means = users.group_by("model").agg(pl.col("ndcg@10").mean())
    personal, popular = (means.filter(pl.col("model") == m)["ndcg@10"].item() for m in ("personal", "popular"))
    assert new["delta"] == pytest.approx(personal - popular, rel=1e-12) and new["model"] == "personal"


@pytest.fixture(scope="module")
def workflow() -> tuple[data.PageData, pl.DataFrame, dict]:
    """The three-model workflow data with its segment (warm, cold), no baseline, no intervals;
    and its per-user frame and options."""
    from page_workflow import workflow as load

    recs, options = load()
    options = {**options, "k": 20, "by": ["model", "segment"], "metrics": ["ndcg", "recall"]}
    for name in ("train", "items"):
        options.pop(name)
    truth, k, metrics = options.pop("truth"), options.pop("k"), options.pop("metrics")
    request = data.request(recs, truth, None, k, None, None, None, None, None, metrics, 3, {**options, "seed": 0})
    return data.collect(request), recs, {**options, "truth": truth, "k": k, "metrics": metrics}


def test_three_models_without_a_baseline_compare_every_pair_and_the_verdict_reads_it(workflow):
    from recframe.reporting._page import sections

    collected, recs, options = workflow
    per_user = recframe.per_user(recs, **options)  # by model and segment, as the page's
    assert_frame_equal(collected.per_user, per_user, check_exact=False, rel_tol=1e-12)
    # (on the page's own frame: per_user's last bits vary from run to run, and compare counts a
    # tie by exact equality, so wins and ties may move by a few users between two per_user calls)
    pairs = recframe.compare(collected.per_user, by="model", seed=0)  # every pair, over the segments
    assert_frame_equal(
        pairs.drop("wins", "ties", "losses"), recframe.compare(per_user, by="model", seed=0).drop("wins", "ties", "losses"),
        check_exact=False, rel_tol=1e-9,
    )  # fmt: skip
    assert collected.comparison is None and collected.pairs is not None and collected.letters is not None
    assert_frame_equal(collected.pairs, pairs, check_exact=False, rel_tol=1e-12)
    letters = recframe.compare_letters(pairs)
    assert_frame_equal(collected.letters, letters)
    # popular is best on both metrics, category and itemknn share the letter b
    assert letters.filter(pl.col("metric") == "ndcg@20").select("model", "letters").rows() == [
        ("popular", "a"), ("category", "b"), ("itemknn", "b")
    ]  # fmt: skip
    _, _, body = sections.pairs(collected)
    assert "<strong>0.201 a</strong>" in body and "0.154 b" in body and "category" in body
    row = pairs.filter((pl.col("model_a") == "category") & (pl.col("model_b") == "popular") & (pl.col("metric") == "ndcg@20"))
    row = row.row(0, named=True)
    assert f"{row['wins']} / {row['ties']} / {row['losses']}" in body and f"{row['d_z']:.3f}" in body
    verdict = sections.verdict(collected)
    assert "every pair of models" in verdict
    # popular is best; the runner-up is the next by mean, and their pair's test is said
    runner = letters.filter(pl.col("metric") == "ndcg@20")["model"][1]
    row = pairs.filter(pl.col("model_a").is_in(["popular", runner]) & pl.col("model_b").is_in(["popular", runner]))
    row = row.filter(pl.col("metric") == "ndcg@20").row(0, named=True)
    assert row["significant"] and row["p_adjusted"] < 0.001
    assert '<strong>popular</strong> is best (<a href="#summary">0.201</a>).</p>' in verdict
    assert (
        f"Best against the runner-up: <strong>popular</strong> is significantly better than {runner} "
        '(<a href="#pairs">p_adjusted &lt; 0.001</a>).'
    ) in verdict


def test_agreement_per_pair_and_the_tie_line_are_recframe_agreement_and_tied_cutoffs(workflow):
    from recframe.reporting._page import sections

    collected, recs, options = workflow
    lists = {name: options[name] for name in ("score", "users", "exclude")}
    rows = recframe.agreement(recs, k=20, by="model", **lists)
    # the page passes truth= (its call then reads the rows the summary's prepared); relevance plays
    # no part unless ties are ordered by it: the same rows without it
    assert_frame_equal(rows, recframe.agreement(recs, k=20, by="model", truth=options["truth"], relevance="rating", **lists))
    got = collected.agreement
    assert isinstance(got, pl.DataFrame) and got.select("model_a", "model_b").rows() == [
        ("category", "itemknn"), ("category", "popular"), ("itemknn", "popular")
    ]  # fmt: skip
    for (a, b), pair in rows.group_by("model_a", "model_b"):
        row = got.filter((pl.col("model_a") == a) & (pl.col("model_b") == b)).row(0, named=True)
        assert row["users"] == pair.height and row["n_tau"] == pair["kendall_tau"].count()
        for measure in ("overlap", "jaccard", "rbo", "kendall_tau"):
            assert row[measure] == pytest.approx(pair[measure].mean(), rel=1e-12), (a, b, measure)
    _, _, body = sections.agreement(collected)
    popular = got.filter(pl.col("model_b") == "popular").row(0, named=True)
    assert f'<td>category</td><td>popular</td><td class="num">{popular["users"]}</td>' in body
    assert f"{popular['rbo']:.3f}" in body and "rank-biased overlap" in body and "Kendall" in body
    # the ties: per k, the lists whose cut-off falls inside equal scores
    tied = recframe.tied_cutoffs(recs, k=20, by="model", truth=options["truth"], relevance="rating", threshold=4, **lists)
    assert_frame_equal(collected.tied, tied, check_row_order=False)  # (tied_cutoffs' row order varies)
    n, lists_ = tied["n_tied@20"].sum(), tied["n_lists"].sum()
    assert n > 0 and f"{n:,} of {lists_:,} lists have equal scores across the cut-off at k=20; ties= decides them " in (
        sections.tie_line(collected).replace("&#x27;", "'")
    )
    assert "(ties='item_asc', default: equal scores ordered by item, ascending;" in sections.tie_line(collected).replace(
        "&#x27;", "'"
    )


def test_with_a_segment_the_example_users_are_chosen_per_segment_as_inspect_chooses_them(workflow):
    from recframe.reporting._page import sections

    collected, recs, options = workflow
    sides = {name: options[name] for name in ("truth", "users", "exclude", "score", "relevance", "threshold", "by")}
    segment_of = dict(options["users"].select("user_id", "segment").iter_rows())
    for select in ("worst", "disagree", "random"):
        metric = {} if select == "random" else {"metric": "ndcg@20"}
        want = recframe.inspect(recs, k=20, select=select, n=2, seed=0, **sides, **metric)
        assert collected.examples[select] == want["user_id"].unique(maintain_order=True).to_list(), select
        assert [segment_of[u] for u in collected.examples[select]] == ["cold", "cold", "warm", "warm"]
    assert collected.ties["worst"].startswith("segment cold: ") and "segment warm: " in collected.ties["worst"]
    _, _, body = sections.examples(collected)
    assert "<h3>Worst: the 2 users of each segment with the lowest ndcg@20" in body
    worst = body[body.index("<h3>Worst") : body.index("<h3>Disagree")]
    cold, warm = worst.index('<h4 class="segment-of">segment cold</h4>'), worst.index('<h4 class="segment-of">segment warm</h4>')
    for user in collected.examples["worst"]:  # each user under its segment's heading
        at = worst.index(f"<h3>user_id {user}<")
        assert (cold < at < warm) == (segment_of[user] == "cold") and at > cold


def test_with_a_segment_the_summary_and_the_per_user_frame_come_from_one_pass(monkeypatch):
    """With a segment (a key of users=, not of the lists) the page's summary by model, its
    per-user frame by model and segment and its tie counts by model are one pass over the
    data: the same lists, the segment only labels each user's; each equals the public call
    made alone."""
    from recframe.engine import _engine

    passes = []
    real = _engine.per_user_rows
    monkeypatch.setattr(_engine, "per_user_rows", lambda *a: passes.append(1) or real(*a))
    request = data.request(RECS, TRUTH, "popular", 10, 0.95, None, None, None, None, ["ndcg", "recall"], 3, dict(SEGMENTED))
    summary_of, per_user, tied = data._numbers(request)
    assert len(passes) == 1
    options = {name: value for name, value in SEGMENTED.items() if name != "by"}
    want = recframe.summary(RECS, truth=TRUTH, k=10, metrics=["ndcg", "recall"], ci=0.95, by="model", **options)
    assert_frame_equal(summary_of(), want, check_exact=False, rel_tol=1e-12)
    assert "segment" not in summary_of().columns and summary_of()["ndcg@10_lo"].null_count() == 0
    lists = {name: value for name, value in SEGMENTED.items() if name not in ("seed", "n_resamples")}
    want = recframe.per_user(RECS, truth=TRUTH, k=10, metrics=["ndcg", "recall"], **lists)
    assert_frame_equal(per_user, want, check_exact=False, rel_tol=1e-12)
    assert per_user.columns[:2] == ["model", "segment"]
    assert tied is not None
    assert_frame_equal(tied, recframe.tied_cutoffs(RECS, truth=TRUTH, k=10, **{**lists, "by": "model"}))


def test_the_page_s_intervals_are_those_of_the_method_asked_for():
    """ci_method="poisson" (computed inside the engine, not from the per-user rows the page
    shares): the page's summary is summary(ci_method="poisson")'s, not the multinomial
    bootstrap's under its name."""
    options = {**OPTIONS, "ci_method": "poisson"}
    request = data.request(RECS, TRUTH, "popular", 10, 0.95, None, None, None, None, ["ndcg"], 3, dict(options))
    got = data._numbers(request)[0]()
    want = recframe.summary(RECS, truth=TRUTH, k=10, metrics=["ndcg"], ci=0.95, **options)
    assert_frame_equal(got, want, check_exact=False, rel_tol=1e-12)
    multinomial = recframe.summary(RECS, truth=TRUTH, k=10, metrics=["ndcg"], ci=0.95, **OPTIONS)
    assert abs(got["ndcg@10_lo"][0] - multinomial["ndcg@10_lo"][0]) > 1e-6  # (0.749347 against 0.749071)


def test_calls_in_a_shared_preparation_prepare_their_inputs_once(monkeypatch):
    """recframe.engine._call.shared_preparation (the page's): calls on the same frames prepare them
    once and give the numbers of calls made alone; another frame, or other conventions, are
    prepared on their own; each call still runs its own data checks."""
    from recframe.engine import _call, _engine

    prepared = []
    real = _engine.prepare

    def counting(*args, **kwargs):
        prepared.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(_engine, "prepare", counting)
    lists = {name: value for name, value in OPTIONS.items() if name != "seed"}
    alone = [recframe.summary(RECS, truth=TRUTH, k=10, **lists), recframe.curve(RECS, ["ndcg"], 5, truth=TRUTH, **lists)]
    assert len(prepared) == 2
    prepared.clear()
    with _call.shared_preparation():
        shared = [recframe.summary(RECS, truth=TRUTH, k=10, **lists), recframe.curve(RECS, ["ndcg"], 5, truth=TRUTH, **lists)]
        assert len(prepared) == 1
        recframe.summary(RECS.clone(), truth=TRUTH, k=10, **lists)  # another frame object
        recframe.summary(RECS, truth=TRUTH, k=10, **{**lists, "ties": "item_desc"})  # another order of ties
        assert len(prepared) == 3
        mutable = RECS.to_pandas()  # pandas changes in place: never shared
        recframe.summary(mutable, truth=TRUTH, k=10, **lists), recframe.summary(mutable, truth=TRUTH, k=10, **lists)
        assert len(prepared) == 5
        broken = RECS.with_columns(
            pl.when(pl.col("user_id") == RECS["user_id"][0]).then(None).otherwise(pl.col("item_id")).alias("item_id")
        )
        with pytest.raises(recframe.RecframeError, match="item_id"):
            recframe.summary(broken, truth=TRUTH, k=10, **lists)  # the checks run on shared rows too
    for want, got in zip(alone, shared):
        assert_frame_equal(got, want)
    assert not _call._SHARED.rows  # released with the block


def test_the_truth_broadcast_is_checked_once_per_page(monkeypatch):
    """The page's calls share their inputs (recframe.engine._call.shared_preparation): the check that
    truth= broadcast over the model keys stays small runs once for them, not once per call,
    and a call outside the page checks again."""
    from recframe.engine import _call

    checked = []
    real = _call._check_broadcast
    monkeypatch.setattr(_call, "_check_broadcast", lambda *a: checked.append(1) or real(*a))
    recframe.report_page(RECS, truth=TRUTH, baseline="popular", **OPTIONS)
    assert len(checked) == 1
    recframe.summary(RECS, truth=TRUTH, **OPTIONS)
    assert len(checked) == 2


def test_the_best_against_the_runner_up_says_each_fold_s_direction(collected):
    """In one fold the runner-up can be significantly the better one: the sentence says so."""
    import dataclasses
    import re

    from recframe.reporting._page import sections

    rows = pl.DataFrame(
        {
            "fold": ["1", "2", "3"], "model_a": ["x", "x", "y"], "model_b": ["y", "y", "x"], "metric": ["ndcg@10"] * 3,
            "delta": [0.1, -0.1, 0.01], "p_adjusted": [0.001, 0.002, 0.5], "significant": [True, True, False],
        }
    )  # fmt: skip
    fake = dataclasses.replace(collected, pairs=rows, request=dataclasses.replace(collected.request, truth_keys=("fold",)))
    standing = sections.Standing("ndcg@10", [("x", 0.5)], True, ("y", 0.4), rows.to_dicts(), [])
    said = re.sub(r"<[^>]+>", "", sections._against_runner(fake, standing))
    assert said == (
        "Best against the runner-up: x is significantly better than y (p_adjusted 0.001 in 1); significantly worse "
        "(p_adjusted 0.002 in 2); not significantly different (p_adjusted 0.500 in 3)."
    )
    cell = re.sub(r"<[^>]+>", "", sections._against_runner(fake, standing, short=True))
    assert cell == "better: 0.001 (1); worse: 0.002 (2); not: 0.500 (3)"
