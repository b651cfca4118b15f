"""Hand-worked checks of the conventions profiles use, and of profile= itself."""

from __future__ import annotations

import math

import polars as pl
import pytest

import recframe
from recframe.profiles import PROFILES

# one list: a (grade 3) at rank 1, b (0) at 2, c (2) at 3; d (1) relevant, not recommended
ONE = pl.DataFrame({"user_id": [1, 1, 1, 1], "item_id": ["a", "b", "c", "d"], "rank": [1, 2, 3, None], "relevance": [3, 0, 2, 1]})


def value(column: str, frame: pl.DataFrame = ONE, **options) -> float:
    k = int(column.split("@")[1])
    return recframe.per_user(frame, k=k, metrics=[column.split("@")[0]], **options)[column].item()


def test_idcg_k_is_k_items_of_gain_one():
    dcg = 1 / math.log2(2) + 1 / math.log2(4)  # binary gains of a and c
    assert value("ndcg@3", gain="binary", idcg="k") == pytest.approx(
        dcg / (1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4))
    )
    # the default ideal list is the user's 3 relevant items, cut at k = 3: the same here
    assert value("ndcg@5", gain="binary") == pytest.approx(dcg / (1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)))
    assert value("ndcg@5", gain="binary", idcg="k") == pytest.approx(dcg / sum(1 / math.log2(i + 1) for i in range(1, 6)))


def test_discount_log2_max_rank_2():
    # ranks 1 and 2 are both undiscounted: log2(max(1, 2)) = log2(2) = 1
    assert value("dcg@3", discount="log2_max_rank_2") == pytest.approx(3 / 1 + 2 / math.log2(3))
    ideal = 3 / 1 + 2 / 1 + 1 / math.log2(3)  # grades 3, 2, 1 at ideal ranks 1, 2, 3
    assert value("ndcg@3", discount="log2_max_rank_2") == pytest.approx((3 + 2 / math.log2(3)) / ideal)


def test_rr_without_cutoff():
    late = pl.DataFrame({"user_id": [1, 1, 1], "item_id": ["a", "b", "c"], "rank": [1, 2, 3], "relevance": [0, 0, 1]})
    assert value("rr@2", late) == 0.0
    assert value("rr@2", late, rr_cutoff=False) == 1 / 3
    # a relevant item that was not recommended does not count
    assert value("rr@2", late.with_columns(pl.lit(None, pl.Int64).alias("rank")), rr_cutoff=False) == 0.0


def test_precision_over_min_k_relevant():
    # hits in the top 3: a and c; R = 3 relevant (a, c, d); min(3, 3) = 3
    assert value("precision@3", precision_denominator="min_k_relevant") == 2 / 3
    assert value("precision@5", precision_denominator="min_k_relevant") == 2 / 3  # min(5, 3) = 3
    assert value("precision@1", precision_denominator="min_k_relevant") == 1 / 1


def test_recall_over_min_k_relevant():
    # R = 3 (a, c, d): at k = 1 the one hit (a) fills the top 1, so LensKit's recall is 1
    assert value("recall@1") == 1 / 3
    assert value("recall@1", recall_denominator="min_k_relevant") == 1 / 1
    assert value("recall@3", recall_denominator="min_k_relevant") == 2 / 3  # min(3, 3) = 3
    assert value("f1@1", recall_denominator="min_k_relevant") == 1.0  # P = R = 1


TIES = pl.DataFrame({"user_id": [1, 1, 1], "item_id": ["a", "b", "c"], "score": [1.0, 1.0 + 1e-9, 0.5], "relevance": [1, 0, 0]})


def test_ties_and_float32_scores():
    exact = dict(score="score", metrics=["rr"], k=3)
    # in float64 b (1 + 1e-9) is first, a second
    assert recframe.per_user(TIES, **exact)["rr@3"].item() == 1 / 2
    # in float32 a and b tie; item ascending puts a first, item descending b
    assert recframe.per_user(TIES, score_dtype="float32", **exact)["rr@3"].item() == 1 / 1
    assert recframe.per_user(TIES, score_dtype="float32", ties="item_desc", **exact)["rr@3"].item() == 1 / 2


def test_unranked_users_skip_leaves_them_out():
    two = pl.DataFrame({"user_id": [1, 2], "item_id": ["a", "a"], "rank": [1, None], "relevance": [1, 1]})
    assert recframe.per_user(two, k=1, metrics=["recall"])["recall@1"].to_list() == [1.0, 0.0]
    assert recframe.per_user(two, k=1, metrics=["recall"], unranked_users="skip")["user_id"].to_list() == [1]
    assert recframe.summary(two, k=1, metrics=["recall"], unranked_users="skip")["recall@1"].item() == 1.0
    assert recframe.summary(two, k=1, metrics=["recall"])["recall@1"].item() == (1.0 + 0.0) / 2


def test_recommenders_ndcg_counts_unranked_users_its_other_metrics_skip():
    # user 2 has a relevant item and no recommendation: MS Recommenders' ndcg_at_k scores them 0
    # and averages over both users, its precision_at_k leaves them out
    two = pl.DataFrame({"user_id": [1, 2], "item_id": ["a", "a"], "rank": [1, None], "relevance": [1, 1]})
    common = dict(k=1, metrics=["precision", "ndcg"], profile="recommenders")
    out = recframe.per_user(two, **common)
    assert out.select("user_id", "precision@1", "ndcg@1").rows() == [(1, 1.0, 1.0), (2, None, 0.0)]
    means = recframe.summary(two, **common)
    # n_users is the count behind every mean but ndcg's, which has its own count
    assert means.columns == [
        "n_users",
        "n_users_ndcg",
        "n_skipped",
        "n_unranked",
        "n_no_relevant",
        "n_no_truth",
        "precision@1",
        "ndcg@1",
    ]
    assert means.row(0) == (1, 2, 1, 1, 0, 0, 1.0, 0.5)
    # an explicit unranked_users overrides the per-metric option too
    assert recframe.per_user(two, unranked_users="skip", **common)["user_id"].to_list() == [1]
    assert recframe.per_user(two, unranked_users="zero", **common)["precision@1"].to_list() == [1.0, 0.0]
    # asked for precision alone, the profile's skip holds and user 2 has no row
    assert recframe.per_user(two, k=1, metrics=["precision"], profile="recommenders")["user_id"].to_list() == [1]


def test_profile_sets_options_and_explicit_option_wins():
    # trec_eval: AP over R = 3 relevant items; a at 1 (1/1) and c at 3 (2/3)
    assert value("ap@3", profile="trec_eval") == pytest.approx((1 / 1 + 2 / 3) / 3)
    assert value("ap@3") == pytest.approx((1 / 1 + 2 / 3) / min(3, 3))
    assert value("ap@2", profile="trec_eval") == pytest.approx(1 / 3)
    assert value("ap@2", profile="trec_eval", ap_denominator="min_k_relevant") == pytest.approx(1 / 2)
    # rectools: binary gain over an ideal list of k items of gain 1; gain= overrides it
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert value("ndcg@3", profile="rectools") == pytest.approx((1 + 1 / math.log2(4)) / ideal)
    assert value("ndcg@3", profile="rectools", gain="linear") == pytest.approx((3 + 2 / math.log2(4)) / ideal)


def test_profile_default_metrics_are_the_peers():
    out = recframe.per_user(ONE, k=1, profile="trec_eval")
    # the profile's defaults: its metrics among recframe's defaults (the rest of the IR toolbox,
    # such as bpref, is asked for by name)
    defaults = recframe.metrics.default_metrics()
    cut = [m for m in defaults if m in PROFILES["trec_eval"].metrics and m != "r_precision"]
    assert "bpref" in PROFILES["trec_eval"].metrics and "bpref" not in defaults
    assert [c for c in out.columns if "@" in c] == [f"{m}@1" for m in cut]
    assert "dcg@1" not in out.columns
    # trec_eval's Rprec has no cut-off: the bare column only
    assert "r_precision" in out.columns and "r_precision@1" not in out.columns
    assert "r_precision@1" in recframe.per_user(ONE, k=1).columns


def test_curve_leaves_out_metrics_the_peer_has_without_cutoff():
    out = recframe.curve(ONE, k_max=2, profile="ranx")
    assert "r_precision" not in out.columns and "ndcg" in out.columns
    with pytest.raises(recframe.RecframeError, match=r"profile='ranx': ranx has 'r_precision' without a cut-off only.*Hint"):
        recframe.curve(ONE, k_max=2, metrics=["r_precision"], profile="ranx")


def test_metric_the_peer_lacks_raises():
    with pytest.raises(recframe.RecframeError, match=r"profile='trec_eval': trec_eval 10.0 has no 'dcg' metric.*Hint"):
        recframe.per_user(ONE, k=1, metrics=["precision", "dcg"], profile="trec_eval")


def test_unknown_profile_lists_the_valid_names():
    with pytest.raises(
        recframe.RecframeError, match=r"profile='trec' is not a known profile. Hint: choose one of .*\"trec_eval\""
    ):
        recframe.summary(ONE, profile="trec")


@pytest.mark.parametrize(
    "option, bad",
    [
        ("rr_cutoff", 1),
        ("idcg", "ideal"),
        ("discount", "log2"),
        ("ties", "random"),
        ("unranked_users", "drop"),
        ("recall_denominator", "k"),
    ],
)
def test_bad_option_values_raise(option, bad):
    with pytest.raises(recframe.RecframeError, match=option):
        recframe.per_user(ONE, k=1, **{option: bad})
