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
    assert value("ndcg@3", gain="binary", idcg="k") == pytest.approx(dcg / (1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)))
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
    assert [c for c in out.columns if "@" in c] == [f"{m}@1" for m in recframe.METRICS if m in PROFILES["trec_eval"].metrics]
    assert "dcg@1" not in out.columns


def test_metric_the_peer_lacks_raises():
    with pytest.raises(recframe.RecframeError, match=r"profile='trec_eval': pytrec-eval-terrier .* has no 'dcg' metric.*Hint"):
        recframe.per_user(ONE, k=1, metrics=["precision", "dcg"], profile="trec_eval")


def test_unknown_profile_lists_the_valid_names():
    with pytest.raises(recframe.RecframeError, match=r"profile='trec' is not a known profile. Hint: choose one of .*\"trec_eval\""):
        recframe.summary(ONE, profile="trec")


@pytest.mark.parametrize("option, bad", [("rr_cutoff", 1), ("idcg", "ideal"), ("discount", "log2"), ("ties", "random"), ("unranked_users", "drop")])
def test_bad_option_values_raise(option, bad):
    with pytest.raises(recframe.RecframeError, match=option):
        recframe.per_user(ONE, k=1, **{option: bad})
