"""The evaluation context: by keys by where they live (model, truth, user attribute), the user
universe of users=, seen items (exclude=), rank gaps and the counts of summary. Every expected
value is worked by hand in the comments; every test runs on every backend."""

from __future__ import annotations

import polars as pl
import pytest

import recframe
from conftest import to_polars

COUNTS = ["n_users", "n_skipped", "n_unranked", "n_no_relevant", "n_no_truth"]

# Two folds (a truth key), two models (model keys), users u1 and u2.
TRUTH = pl.DataFrame({
    "fold":      [1, 1, 2, 2],
    "user_id":   ["u1", "u2", "u1", "u1"],
    "item_id":   ["a", "d", "a", "e"],
    "relevance": [1, 1, 1, 1],
})  # fmt: skip
RECS = pl.DataFrame({
    "model":   ["A", "A", "A", "A", "B"],
    "fold":    [1, 1, 2, 2, 1],
    "user_id": ["u1", "u1", "u1", "u1", "u1"],
    "item_id": ["a", "b", "c", "a", "b"],
    "rank":    [1, 2, 1, 2, 1],
})  # fmt: skip
USERS = pl.DataFrame({"user_id": ["u1", "u2", "u3"], "segment": ["warm", "cold", "cold"]})


def rows(frame, *columns):
    return to_polars(frame).select(*columns).rows()


def test_model_and_truth_keys(constructor):
    """Truth broadcast over models, joined on folds. Lists (model, fold, user):
    A,1,u1: a@1 b@2, truth a        -> recall@2 1,   precision@2 1/2
    A,1,u2: nothing, truth d        -> unranked: 0, 0
    A,2,u1: c@1 a@2, truth a e      -> recall@2 1/2, precision@2 1/2
    B,1,u1: b@1, truth a            -> 0, 0
    B,1,u2: unranked                -> 0, 0
    B,2,u1: B has no fold-2 list    -> unranked: 0, 0
    """
    kw = dict(truth=constructor(TRUTH), k=2, metrics=["precision", "recall"], by=["model", "fold"])
    per_user = recframe.per_user(constructor(RECS), **kw)
    assert rows(per_user, "model", "fold", "user_id", "n_relevant", "precision@2", "recall@2") == [
        ("A", 1, "u1", 1, 1 / 2, 1.0),
        ("A", 1, "u2", 1, 0.0, 0.0),
        ("A", 2, "u1", 2, 1 / 2, 1 / 2),
        ("B", 1, "u1", 1, 0.0, 0.0),
        ("B", 1, "u2", 1, 0.0, 0.0),
        ("B", 2, "u1", 2, 0.0, 0.0),
    ]
    summary = recframe.summary(constructor(RECS), **kw)
    assert rows(summary, "model", "fold", *COUNTS, "recall@2") == [
        ("A", 1, 2, 0, 1, 0, 0, (1 + 0) / 2),
        ("A", 2, 1, 0, 0, 0, 0, 1 / 2),
        ("B", 1, 2, 0, 1, 0, 0, 0.0),
        ("B", 2, 1, 0, 1, 0, 0, 0.0),
    ]


def test_an_item_relevant_in_two_folds_is_no_duplicate(constructor):
    # item a is in both folds' truth of u1: joined on the fold, each fold sees it once
    out = recframe.summary(constructor(RECS), truth=constructor(TRUTH), k=1, metrics=["recall"], by=["fold", "model"])
    assert rows(out, "fold", "model", "recall@1") == [(1, "A", (1 + 0) / 2), (1, "B", 0.0), (2, "A", 0.0), (2, "B", 0.0)]


def test_user_attribute_keys_from_users(constructor):
    """users= adds the segment to each user's row and fixes the universe: u3 (cold) has no truth
    and no list, so no row. By (model, segment) over fold 1 only:
    A warm: u1 recall@2 1; A cold: u2 unranked 0; B warm: u1 0; B cold: u2 0."""
    recs = RECS.filter(pl.col("fold") == 1).drop("fold")
    truth = TRUTH.filter(pl.col("fold") == 1).drop("fold")
    kw = dict(truth=constructor(truth), users=constructor(USERS), k=2, metrics=["recall"], by=["model", "segment"])
    per_user = recframe.per_user(constructor(recs), **kw)
    assert to_polars(per_user).columns == ["model", "segment", "user_id", "n_relevant", "recall@2"]
    assert rows(per_user, "model", "segment", "user_id", "recall@2") == [
        ("A", "cold", "u2", 0.0),
        ("A", "warm", "u1", 1.0),
        ("B", "cold", "u2", 0.0),
        ("B", "warm", "u1", 0.0),
    ]
    summary = recframe.summary(constructor(recs), **kw)
    assert rows(summary, "model", "segment", "n_users", "n_unranked", "recall@2") == [
        ("A", "cold", 1, 1, 0.0),
        ("A", "warm", 1, 0, 1.0),
        ("B", "cold", 1, 1, 0.0),
        ("B", "warm", 1, 0, 0.0),
    ]


def test_segments_in_a_long_frame(constructor):
    # no truth=: the long frame holds everything; the segment still comes from users=
    long = pl.DataFrame({"user_id": ["u1", "u1", "u2"], "item_id": ["a", "b", "a"], "rank": [1, 2, 1], "relevance": [0, 1, 1]})
    out = recframe.summary(constructor(long), users=constructor(USERS), k=1, metrics=["precision"], by="segment")
    assert rows(out, "segment", "n_users", "precision@1") == [("cold", 1, 1.0), ("warm", 1, 0.0)]


def test_users_fixes_the_universe(constructor):
    recs = pl.DataFrame({"user_id": ["u1", "u9"], "item_id": ["a", "a"], "rank": [1, 1]})
    truth = pl.DataFrame({"user_id": ["u1", "u2", "u8"], "item_id": ["a", "b", "c"], "relevance": [1, 1, 1]})
    kw = dict(truth=constructor(truth), k=1, metrics=["recall"])
    # u9 was recommended to but is not a listed user: an error, naming the user
    with pytest.raises(recframe.RecframeError, match=r"user_id='u9' has recommendations but is not in users="):
        to_polars(recframe.per_user(constructor(recs), users=constructor(USERS), **kw))
    # dropped on request; u8 (truth only, not listed) is not evaluated; u2 listed: unranked, 0
    out = recframe.per_user(constructor(recs), users=constructor(USERS), unlisted_users="drop", **kw)
    assert rows(out, "user_id", "recall@1") == [("u1", 1.0), ("u2", 0.0)]


def test_duplicate_users_rows_are_refused(constructor):
    users = pl.DataFrame({"user_id": ["u1", "u1"], "segment": ["warm", "cold"]})
    recs = pl.DataFrame({"user_id": ["u1"], "item_id": ["a"], "rank": [1], "relevance": [1]})
    with pytest.raises(recframe.RecframeError, match=r"users= has 2 rows for user_id='u1'"):
        to_polars(recframe.summary(constructor(recs), users=constructor(users), by="segment"))


def test_exclude_removes_seen_items_and_reranks(constructor):
    """u1's list a b c d; seen: b (relevant) and x (not in the list). After exclude the list is
    a c d (d now at 3) and the truth d e (b was seen): precision@3 = 1/3, recall@3 = 1/2.
    Without exclude: hits b@2 of b d e -> precision@3 1/3, recall@3 1/3."""
    recs = pl.DataFrame(
        {"user_id": ["u1"] * 4, "item_id": ["a", "b", "c", "d"], "rank": [1, 2, 3, 4], "score": [0.9, 0.8, 0.7, 0.6]}
    )
    truth = pl.DataFrame({"user_id": ["u1"] * 3, "item_id": ["b", "d", "e"], "relevance": [1, 1, 1]})
    seen = pl.DataFrame({"user_id": ["u1", "u1"], "item_id": ["b", "x"], "rating": [5, 3]})
    kw = dict(truth=constructor(truth), k=3, metrics=["precision", "recall", "rr"])
    for order in ({"rank": "rank"}, {"score": "score"}):
        frame = constructor(recs.drop("score" if "rank" in order else "rank"))
        out = recframe.per_user(frame, exclude=constructor(seen), **order, **kw)
        assert rows(out, "n_relevant", "precision@3", "recall@3", "rr@3") == [(2, 1 / 3, 1 / 2, 1 / 3)]
    plain = recframe.per_user(constructor(recs.drop("score")), **kw)
    assert rows(plain, "n_relevant", "precision@3", "recall@3", "rr@3") == [(3, 1 / 3, 1 / 3, 1 / 2)]


def test_exclude_matches_on_by_keys_it_has(constructor):
    # the fold-1 seen item leaves fold 1 only: fold 2 keeps item a at rank 2
    seen = pl.DataFrame({"fold": [1], "user_id": ["u1"], "item_id": ["a"]})
    out = recframe.per_user(constructor(RECS.filter(pl.col("model") == "A")), truth=constructor(TRUTH), exclude=constructor(seen),
                            k=2, metrics=["recall"], by=["model", "fold"])  # fmt: skip
    # A,1,u1: list b (a seen), truth none left -> no relevant; A,1,u2: d unranked -> 0; A,2,u1: a@2 of a e -> 1/2
    assert rows(out, "fold", "user_id", "n_relevant", "recall@2") == [(1, "u1", 0, None), (1, "u2", 1, 0.0), (2, "u1", 2, 1 / 2)]


def test_exclude_matches_on_a_model_key_it_has(constructor):
    """Item a seen under model A only: it leaves A's list and A's truth, and B keeps both.
    A: list b (a removed), truth a removed -> no relevant item: null. B: a@1 of truth a -> recall@2
    1/1, precision@2 1/2."""
    recs = pl.DataFrame(
        {"model": ["A", "A", "B", "B"], "user_id": [1] * 4, "item_id": ["a", "b", "a", "b"], "rank": [1, 2, 1, 2]}
    )
    truth = pl.DataFrame({"user_id": [1], "item_id": ["a"], "relevance": [1]})
    seen = pl.DataFrame({"model": ["A"], "user_id": [1], "item_id": ["a"]})
    kw = dict(truth=constructor(truth), exclude=constructor(seen), k=2, metrics=["recall", "precision"], by="model")
    out = recframe.per_user(constructor(recs), **kw)
    assert rows(out, "model", "n_relevant", "recall@2", "precision@2") == [("A", 0, None, None), ("B", 1, 1.0, 1 / 2)]
    # in one long frame the same: the model key of exclude= is joined on
    long = recs.with_columns(relevance=pl.Series([1, None, 1, None]))
    out = recframe.per_user(constructor(long), **{**kw, "truth": None})
    assert rows(out, "model", "n_relevant", "recall@2", "precision@2") == [("A", 0, None, None), ("B", 1, 1.0, 1 / 2)]


@pytest.mark.parametrize("arg", ["train", "items"])
def test_a_by_key_in_train_or_items_is_refused_not_pooled(constructor, arg):
    """train= and items= are read whole: a fold column there would be pooled across folds."""
    side = pl.DataFrame({"fold": [1, 2], "user_id": ["u1", "u2"], "item_id": ["a", "b"]})
    kw = {"train" if arg == "train" else "items": constructor(side if arg == "train" else side.drop("user_id"))}
    metric = "novelty" if arg == "train" else "catalog_coverage"
    with pytest.raises(
        recframe.RecframeError, match=rf"{arg}= has a column 'fold', which is a by= key.*Hint: evaluate each fold"
    ):
        recframe.summary(constructor(RECS), truth=constructor(TRUTH), k=2, metrics=[metric], by=["model", "fold"], **kw)


def test_items_joins_on_the_item_only(constructor):
    """A user column of items= (any dtype) is not a join key: coverage@2 of u1's lists over the
    catalog a b c d, in fold 1: A recommends a b (2/4), B b (1/4)."""
    items = pl.DataFrame({"item_id": ["a", "b", "c", "d"], "user_id": [1.5, 2.5, 3.5, 4.5]})
    out = recframe.summary(constructor(RECS.filter(pl.col("fold") == 1)), truth=constructor(TRUTH.filter(pl.col("fold") == 1)),
                           items=constructor(items), k=2, metrics=["catalog_coverage"], by="model")  # fmt: skip
    assert rows(out, "model", "catalog_coverage@2") == [("A", 2 / 4), ("B", 1 / 4)]


def test_a_join_key_mismatch_names_the_frames_that_disagree(constructor):
    seen = pl.DataFrame({"user_id": ["u1"], "item_id": [7]})
    with pytest.raises(recframe.RecframeError, match=r"'item_id' holds String in the recommendations but Int64 in exclude="):
        recframe.per_user(constructor(RECS), truth=constructor(TRUTH), exclude=constructor(seen), k=2, by=["model", "fold"])


@pytest.mark.parametrize(("policy", "expected"), [("keep", (0.0, 0.0)), ("rerank", (1 / 3, 1.0))])
def test_rank_gaps(constructor, policy, expected):
    # ranks 1, 3, 7 with the relevant item at 7: as positions it is past k=3; re-ranked it is 3rd
    df = pl.DataFrame({"user_id": [1, 1, 1], "item_id": ["a", "b", "c"], "rank": [1, 3, 7], "relevance": [0, 0, 1]})
    with pytest.raises(
        recframe.RecframeError, match=r"has gaps: user_id=1 has 3 ranked rows but ranks up to 7.*rank_gaps=\"rerank\""
    ):
        to_polars(recframe.per_user(constructor(df), k=3, metrics=["precision", "recall"]))
    out = recframe.per_user(constructor(df), k=3, metrics=["precision", "recall"], rank_gaps=policy)
    assert rows(out, "precision@3", "recall@3") == [expected]


def test_reranking_keeps_the_rank_checks(constructor):
    bad = pl.DataFrame({"user_id": [1, 1], "item_id": ["a", "b"], "rank": [0, 2], "relevance": [1, 0]})
    with pytest.raises(recframe.RecframeError, match=r"rank 0 < 1"):
        to_polars(recframe.per_user(constructor(bad), rank_gaps="rerank"))
    tied = pl.DataFrame({"user_id": [1, 1], "item_id": ["a", "b"], "rank": [3, 3], "relevance": [1, 0]})
    with pytest.raises(recframe.RecframeError, match=r"duplicate ranks"):
        to_polars(recframe.per_user(constructor(tied), rank_gaps="rerank"))


def test_counts_of_users_without_truth_or_relevant_items(constructor):
    """u1: relevant a recommended (counted); u2: only a rating below the threshold (no relevant);
    u3: recommended, absent from the truth (no truth); u4: relevant, nothing recommended."""
    recs = pl.DataFrame({"user_id": ["u1", "u2", "u3"], "item_id": ["a", "b", "c"], "rank": [1, 1, 1]})
    truth = pl.DataFrame({"user_id": ["u1", "u2", "u4"], "item_id": ["a", "b", "d"], "rating": [5, 2, 4]})
    kw = dict(truth=constructor(truth), relevance="rating", threshold=4, k=1, metrics=["recall"])
    skip = recframe.summary(constructor(recs), **kw)
    # counted: u1 (1.0) and u4 (0.0); skipped: u2 and u3
    assert rows(skip, *COUNTS, "recall@1") == [(2, 2, 1, 1, 1, 1 / 2)]
    zero = recframe.summary(constructor(recs), empty_users="zero", **kw)
    assert rows(zero, *COUNTS, "recall@1") == [(4, 0, 1, 1, 1, 1 / 4)]
    unranked_skip = recframe.summary(constructor(recs), unranked_users="skip", **kw)
    assert rows(unranked_skip, *COUNTS, "recall@1") == [(1, 3, 1, 1, 1, 1.0)]


@pytest.mark.parametrize(
    ("by", "message"),
    [
        (
            "segmnt",
            r"column 'segmnt' \(the by= argument\) is not a column anywhere: looked in the recommendations .*truth= .*users= .*did you mean by=\"segment\"",
        ),
        ("fold", r"by key 'fold' is a column of truth= but not of the recommendations"),
        ("model", r"by key 'model' is a column of users= and of the recommendations"),
    ],
)
def test_key_errors_name_where_they_looked(constructor, by, message):
    recs = RECS.filter(pl.col("fold") == 1).drop("fold")
    users = USERS.with_columns(model=pl.lit("A"))
    with pytest.raises(recframe.RecframeError, match=message):
        recframe.summary(constructor(recs), truth=constructor(TRUTH), users=constructor(users), by=by)


def test_model_fold_and_segment_together(constructor):
    """All three kinds of key in one call. Per (model, fold, user), as in test_model_and_truth_keys:
    A,1,u1 recall@2 1; A,1,u2 0; A,2,u1 1/2; B,1,u1 0; B,1,u2 0; B,2,u1 0.
    u1 is warm, u2 cold, so each (model, fold, segment) group holds one user."""
    out = recframe.summary(constructor(RECS), truth=constructor(TRUTH), users=constructor(USERS),
                           k=2, metrics=["recall"], by=["model", "fold", "segment"])  # fmt: skip
    assert rows(out, "model", "fold", "segment", "n_users", "n_unranked", "recall@2") == [
        ("A", 1, "cold", 1, 1, 0.0),
        ("A", 1, "warm", 1, 0, 1.0),
        ("A", 2, "warm", 1, 0, 1 / 2),
        ("B", 1, "cold", 1, 1, 0.0),
        ("B", 1, "warm", 1, 0, 0.0),
        ("B", 2, "warm", 1, 1, 0.0),
    ]
    # the per-user frame carries the keys in by order, then the user
    per_user = to_polars(recframe.per_user(constructor(RECS), truth=constructor(TRUTH), users=constructor(USERS),
                                           k=2, metrics=["recall"], by=["segment", "model", "fold"]))  # fmt: skip
    assert per_user.columns[:4] == ["segment", "model", "fold", "user_id"]
    assert per_user.height == 6
