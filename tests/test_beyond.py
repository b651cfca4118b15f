"""Beyond accuracy: hand-worked examples per metric, the peers' published examples, property
tests against the pair-by-pair reference on every backend, and the errors of the side inputs."""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recframe
import reference
from conftest import BACKENDS, to_polars
from recframe import RecframeError

# Two users' lists: user 1 gets a, b, c; user 2 gets a, d (and has a relevant item e that
# was not recommended).
FRAME = pl.DataFrame(
    {
        "user_id": [1, 1, 1, 2, 2, 2],
        "item_id": ["a", "b", "c", "a", "d", "e"],
        "rank": [1, 2, 3, 1, 2, None],
        "relevance": [1, 0, 1, 0, 1, 1],
    }
)
# 4 training users; a has 3 of them, b and c one each, d and e none (cold items)
TRAIN = pl.DataFrame({"user_id": [1, 2, 3, 3, 4], "item_id": ["a", "a", "a", "b", "c"]})
ITEMS = pl.DataFrame(
    {
        "item_id": ["a", "b", "c", "d", "e"],
        "genre": ["x", "x", "y", "y", "z"],
        "v1": [1.0, 0.0, 1.0, 0.0, 1.0],
        "v2": [0.0, 1.0, 1.0, 1.0, 0.0],
    }
)


def values(out: Any, column: str) -> list[float]:
    return to_polars(out).sort("user_id")[column].to_list()


# ------------------------------------------------------------------------ hand-worked examples


def test_novelty_is_the_mean_self_information_of_the_top_k() -> None:
    out = recframe.per_user(FRAME, k=[2, 3], metrics=["novelty"], train=TRAIN)
    # -log2(3/4) for a, -log2(1/4) = 2 for b, c and for cold d (counted as one user)
    a, rare = -math.log2(3 / 4), 2.0
    assert values(out, "novelty@2") == pytest.approx([(a + rare) / 2, (a + rare) / 2], abs=1e-12)
    assert values(out, "novelty@3") == pytest.approx([(a + 2 * rare) / 3, (a + rare) / 2], abs=1e-12)
    surprisal = recframe.per_user(FRAME, k=[2, 3], metrics=["novelty"], train=TRAIN, novelty="surprisal")
    assert values(surprisal, "novelty@2") == pytest.approx([(a + rare) / 2 / 2] * 2, abs=1e-12)  # / log2(4)
    # RePlay divides by k: user 2's two items at k = 3
    assert values(surprisal, "novelty@3") == pytest.approx([(a + 2 * rare) / 2 / 3, (a + rare) / 2 / 3], abs=1e-12)


def test_popularity_is_the_mean_training_users_of_the_top_k() -> None:
    out = recframe.per_user(FRAME, k=[2, 3], metrics=["popularity"], train=TRAIN)
    assert values(out, "popularity@2") == [2.0, 1.5]  # (3 + 1) / 2, (3 + 0) / 2
    assert values(out, "popularity@3") == pytest.approx([5 / 3, 1.5])
    share = recframe.per_user(FRAME, k=2, metrics=["popularity"], train=TRAIN, popularity="share")
    assert values(share, "popularity@2") == pytest.approx([2.0 / 5, 1.5 / 5])  # 5 training pairs


def test_cold_items_counted_or_skipped() -> None:
    # user 2's top 2 is a (3 of 4 training users) and the cold item d
    a = -math.log2(3 / 4)
    counted = recframe.per_user(FRAME, k=2, metrics=["novelty", "popularity"], train=TRAIN)
    # d counts as an item of one training user (novelty log2 4 = 2) and of popularity 0
    assert values(counted, "novelty@2")[1] == pytest.approx((a + 2) / 2, abs=1e-12)
    assert values(counted, "popularity@2")[1] == 1.5
    skipped = recframe.per_user(FRAME, k=2, metrics=["novelty", "popularity"], train=TRAIN, cold_items="skip")
    # d is left out: the means are over a alone (user 1's a and b are both in train=)
    assert values(skipped, "novelty@2") == pytest.approx([(a + 2) / 2, a], abs=1e-12)
    assert values(skipped, "popularity@2") == [2.0, 3.0]
    surprisal = recframe.per_user(FRAME, k=2, metrics=["novelty"], train=TRAIN, cold_items="skip", novelty="surprisal")
    assert values(surprisal, "novelty@2")[1] == pytest.approx(a / 2 / 2, abs=1e-12)  # / log2(4), / k


def test_a_list_without_training_items_is_null_under_cold_items_skip() -> None:
    # user 2's top 1 is d alone, not in train=: null there and left out of the mean
    frame = pl.DataFrame(
        {"user_id": [1, 1, 2, 2], "item_id": ["b", "d", "d", "a"], "rank": [1, 2, 1, 2], "relevance": [1, 0, 1, 0]}
    )
    options: dict[str, Any] = {"k": [1, 2], "metrics": ["novelty", "popularity"], "train": TRAIN, "cold_items": "skip"}
    out = recframe.per_user(frame, **options)
    assert values(out, "popularity@1") == [1.0, None]
    assert values(out, "popularity@2") == [1.0, 3.0]
    assert values(out, "novelty@1") == [2.0, None]
    mean = recframe.summary(frame, **options).row(0, named=True)
    assert mean["n_users"] == 2
    assert (mean["popularity@1"], mean["novelty@1"]) == (1.0, 2.0)
    assert mean["popularity@2"] == 2.0
    # the same under surprisal (which divides by k): null, not 0
    surprisal = recframe.per_user(frame, **options, novelty="surprisal")
    assert values(surprisal, "novelty@1") == [1.0, None]


def test_long_tail_counts_the_items_outside_the_head() -> None:
    # 5 training pairs: a holds 3; the head is what comes before 20% (1 pair) is reached: a
    out = recframe.per_user(FRAME, k=[2, 3], metrics=["long_tail"], train=TRAIN)
    assert values(out, "long_tail@2") == [0.5, 0.5]  # b (tail), d (cold: tail)
    assert values(out, "long_tail@3") == pytest.approx([2 / 3, 0.5])
    # a head of 70%: before b and c (tied at 1 user each) 3 pairs = 60% < 70%, so both join
    wide = recframe.per_user(FRAME, k=3, metrics=["long_tail"], train=TRAIN, head_share=0.7)
    assert values(wide, "long_tail@3") == [0.0, 0.5]
    # ACLT: the count itself (long_tail is APLT, the share)
    counts = recframe.per_user(FRAME, k=[2, 3], metrics=["aclt"], train=TRAIN)
    assert values(counts, "aclt@2") == [1.0, 1.0] and values(counts, "aclt@3") == [2.0, 1.0]


def test_ild_hamming_and_cosine() -> None:
    out = recframe.per_user(FRAME, k=[1, 2, 3], metrics=["ild"], items=ITEMS, item_features="genre")
    assert values(out, "ild@1") == [0.0, 0.0]  # one item: no pair
    assert values(out, "ild@2") == [0.0, 1.0]  # a, b both x; a x, d y
    assert values(out, "ild@3") == pytest.approx([2 / 3, 1.0])  # pairs ab 0, ac 1, bc 1
    both = recframe.per_user(FRAME, k=3, metrics=["ild"], items=ITEMS, item_features=["genre", "v1"])
    # genre and v1 differ: ab 0+1, ac 1+0, bc 1+1
    assert values(both, "ild@3") == pytest.approx([4 / 3, 2.0])
    cosine = recframe.per_user(FRAME, k=3, metrics=["ild"], items=ITEMS, item_features=["v1", "v2"], distance="cosine")
    # a = (1, 0), b = (0, 1), c = (1, 1), d = (0, 1): ab 1, ac and bc 1 - 1/sqrt(2)
    assert values(cosine, "ild@3") == pytest.approx([(1 + 2 * (1 - 1 / math.sqrt(2))) / 3, 1.0], abs=1e-12)


def test_category_diversity_counts_distinct_categories_over_k() -> None:
    out = recframe.per_user(FRAME, k=[2, 3], metrics=["category_diversity"], items=ITEMS, item_features="genre")
    assert values(out, "category_diversity@2") == [0.5, 1.0]  # a, b both x; a x, d y
    # user 1: x, x, y -> 2 of 3; user 2 has two items, over k = 3 (as RePlay)
    assert values(out, "category_diversity@3") == pytest.approx([2 / 3, 2 / 3])


def test_intersection_and_unexpectedness_against_a_baseline_model() -> None:
    base = FRAME.filter(pl.col("rank").is_not_null()).with_columns(pl.lit("pop").alias("model"))
    other = pl.DataFrame(
        {"model": "knn", "user_id": [1, 1, 1, 2], "item_id": ["c", "a", "z", "q"], "rank": [1, 2, 3, 1], "relevance": 0}
    )
    recs = pl.concat([base, other.cast(base.schema)], how="diagonal")
    # (knn's users have no relevant item: empty_users="zero" keeps them, as the mean does)
    out = recframe.per_user(
        recs, k=[2, 3], metrics=["intersection", "unexpectedness"], by="model", baseline="pop", empty_users="zero"
    )
    rows = {(r["model"], r["user_id"]): r for r in out.iter_rows(named=True)}
    # knn user 1 top 2: c, a; pop's top 2: a, b -> a shared; top 3: c, a, z vs a, b, c -> 2
    assert rows[("knn", 1)]["intersection@2"] == 0.5 and rows[("knn", 1)]["unexpectedness@2"] == 0.5
    assert rows[("knn", 1)]["intersection@3"] == pytest.approx(2 / 3)
    assert rows[("knn", 1)]["unexpectedness@3"] == pytest.approx(1 / 3)
    assert rows[("knn", 2)]["intersection@2"] == 0.0 and rows[("knn", 2)]["unexpectedness@2"] == 1.0
    # unexpectedness divides by k (RePlay): pop's user 2 has 2 items in its top 3
    assert rows[("pop", 2)]["intersection@3"] == 1.0 and rows[("pop", 2)]["unexpectedness@3"] == pytest.approx(1 / 3)


def test_group_metrics_worked_by_hand() -> None:
    out = recframe.summary(
        FRAME,
        k=[2, 3],
        metrics=["catalog_coverage", "user_coverage", "user_coverage_full", "gini", "entropy", "personalization"],
        items=ITEMS,
    ).row(0, named=True)
    # top 2: a twice, b, d; top 3 adds c. Catalog of 5 items.
    assert out["catalog_coverage@2"] == pytest.approx(3 / 5) and out["catalog_coverage@3"] == pytest.approx(4 / 5)
    assert out["user_coverage@2"] == 1.0 and out["user_coverage_full@2"] == 1.0
    assert out["user_coverage_full@3"] == 0.5  # user 2 has two items
    # top 2 exposures sorted over the catalog: c 0, e 0, b 1, d 1, a 2 (total 4)
    gini = sum((2 * j - 5 - 1) * c for j, c in enumerate([0, 0, 1, 1, 2], 1)) / (5 * 4)
    assert out["gini@2"] == pytest.approx(gini, abs=1e-12)
    assert out["entropy@2"] == pytest.approx(1.5)  # p = 1/2, 1/4, 1/4
    assert out["personalization@2"] == pytest.approx(1 - 1 / 2)  # the users share a, out of k = 2
    assert out["personalization@3"] == pytest.approx(1 - 1 / 3)


def test_gini_extremes() -> None:
    catalog = pl.DataFrame({"item_id": ["a", "b", "c", "d"]})
    same = pl.DataFrame({"user_id": [1, 2, 3], "item_id": ["a", "a", "a"], "rank": [1, 1, 1], "relevance": [1, 1, 1]})
    spread = same.with_columns(pl.Series("item_id", ["a", "b", "c"]))
    flat = pl.concat([spread, pl.DataFrame({"user_id": [4], "item_id": ["d"], "rank": [1], "relevance": [1]})])
    assert recframe.summary(same, k=1, metrics=["gini"], items=catalog)["gini@1"][0] == pytest.approx(3 / 4)
    assert recframe.summary(flat, k=1, metrics=["gini"], items=catalog)["gini@1"][0] == pytest.approx(0.0, abs=1e-12)


# ------------------------------------------------------------------------ the peers' examples


def test_rectools_mean_inv_user_freq_docstring_example() -> None:
    # RecTools' MeanInvUserFreq docstring: reco and prev_interactions, values at k = 1 and 3
    reco = pl.DataFrame({"user_id": [1, 2, 2, 3, 3], "item_id": [3, 2, 3, 1, 2], "rank": [1, 1, 2, 1, 2], "relevance": 1})
    prev = pl.DataFrame({"user_id": [1, 1, 2, 3], "item_id": [1, 2, 1, 1]})
    out = recframe.per_user(reco, k=[1, 3], metrics=["novelty"], train=prev)
    assert values(out, "novelty@1") == pytest.approx([1.5849625, 1.5849625, 0.0], abs=1e-7)
    assert values(out, "novelty@3") == pytest.approx([1.5849625, 1.5849625, 0.79248125], abs=1e-7)


def test_rectools_serendipity_docstring_example() -> None:
    # RecTools' Serendipity docstring: relevant items placed above their popularity rank
    reco = pl.DataFrame(
        {"user_id": ["u1", "u1", "u2", "u2", "u3", "u4", "u4"], "item_id": ["i1", "i2", "i2", "i3", "i3", "i2", "i3"]}
    ).with_columns(rank=pl.Series([1, 2, 1, 2, 1, 1, 2]))
    test = pl.DataFrame({"user_id": ["u1", "u1", "u2", "u2", "u3", "u4"], "item_id": ["i1", "i2", "i2", "i3", "i2", "i2"]})
    prev = pl.DataFrame({"user_id": ["u1", "u1", "u2", "u2", "u3"], "item_id": ["i1", "i2", "i1", "i2", "i1"]})
    catalog = pl.DataFrame({"item_id": ["i1", "i2", "i3", "i4"]})
    out = recframe.per_user(
        reco,
        truth=test.with_columns(relevance=1),
        k=[1, 2],
        metrics=["serendipity"],
        train=prev,
        items=catalog,
        empty_users="zero",
    )
    assert values(out, "serendipity@1") == [0.0, 0.25, 0.0, 0.25]
    assert values(out, "serendipity@2") == [0.0, 0.5, 0.0, 0.125]


def test_rectools_intra_list_diversity_docstring_example() -> None:
    # RecTools' IntraListDiversity docstring, with its Hamming distance (features that differ)
    reco = pl.DataFrame({"user_id": [1, 1, 1, 2, 2], "item_id": [1, 2, 3, 1, 4], "rank": [1, 2, 3, 1, 2], "relevance": 1})
    features = pl.DataFrame({"item_id": [1, 2, 3, 4], "feature_1": [0, 0, 1, 0], "feature_2": [0, 1, 1, 0]})
    out = recframe.per_user(reco, k=[1, 2, 3], metrics=["ild"], items=features, item_features=["feature_1", "feature_2"])
    assert values(out, "ild@1") == [0.0, 0.0]
    assert values(out, "ild@2") == [1.0, 0.0]
    assert values(out, "ild@3") == pytest.approx([1.33333333, 0.0])


# ------------------------------------------------------------------------ counting and users


def test_a_user_with_nothing_recommended_is_left_out_of_list_metrics() -> None:
    unranked = pl.concat([FRAME, pl.DataFrame({"user_id": [3], "item_id": ["a"], "rank": [None], "relevance": [1]})])
    per_user = recframe.per_user(unranked, k=2, metrics=["novelty", "precision"], train=TRAIN)
    assert per_user.filter(pl.col("user_id") == 3)["novelty@2"].to_list() == [None]
    out = recframe.summary(unranked, k=2, metrics=["novelty", "precision"], train=TRAIN).row(0, named=True)
    # novelty averages the two users with a list; precision counts user 3 too (0 there)
    assert out["n_users"] == 2 and out["n_users_precision"] == 3
    assert out["novelty@2"] == pytest.approx((-math.log2(3 / 4) + 2) / 2)
    assert out["precision@2"] == pytest.approx((0.5 + 0.5 + 0) / 3)
    # user coverage counts every list: user 3 has none
    cover = recframe.summary(unranked, k=2, metrics=["user_coverage"]).row(0, named=True)
    assert cover["user_coverage@2"] == pytest.approx(2 / 3)


def test_group_metrics_follow_by_and_users() -> None:
    two = pl.concat([FRAME.with_columns(model=pl.lit("A")), FRAME.filter(pl.col("user_id") == 1).with_columns(model=pl.lit("B"))])
    out = recframe.summary(two, k=2, metrics=["catalog_coverage", "user_coverage"], by="model", train=TRAIN, items=ITEMS)
    assert out["catalog_coverage@2"].to_list() == pytest.approx([3 / 5, 2 / 5])
    # users= without user 2 and unlisted users dropped: user 2's items leave the coverage
    users = pl.DataFrame({"user_id": [1]})
    only = recframe.summary(FRAME, k=2, metrics=["catalog_coverage"], items=ITEMS, users=users, unlisted_users="drop")
    assert only["catalog_coverage@2"].to_list() == pytest.approx([2 / 5])


def test_the_catalog_without_items_is_the_training_items() -> None:
    recs = FRAME.filter(pl.col("item_id").is_in(["a", "b", "c"]))
    out = recframe.summary(recs, k=3, metrics=["catalog_coverage", "gini"], train=TRAIN).row(0, named=True)
    assert out["catalog_coverage@3"] == 1.0  # a, b, c: every training item
    # exposures a 2, b 1, c 1 over 3 items: (2*1-4)*1 + (2*2-4)*1 + (2*3-4)*2 = 2, / (3 * 4)
    assert out["gini@3"] == pytest.approx(2 / 12)


def test_summary_is_the_mean_of_per_user_for_list_metrics() -> None:
    kwargs: dict[str, Any] = {"k": 3, "metrics": ["novelty", "long_tail", "ild"], "train": TRAIN, "items": ITEMS}
    kwargs["item_features"] = "genre"
    per_user = recframe.per_user(FRAME, **kwargs)
    out = recframe.summary(FRAME, **kwargs)
    for column in ("novelty@3", "long_tail@3", "ild@3"):
        assert out[column][0] == pytest.approx(per_user[column].mean(), abs=1e-12)


# ------------------------------------------------------------------------ against the reference

ITEM_POOL = [f"i{j}" for j in range(8)]


@st.composite
def beyond_cases(draw: st.DrawFn) -> dict[str, Any]:
    models = draw(st.sampled_from([["A"], ["A", "B"]]))
    n_users = draw(st.integers(1, 5))
    rows, lists, relevant = [], {}, {}
    for model in models:
        for user in range(n_users):
            items = draw(st.lists(st.sampled_from(ITEM_POOL), unique=True, max_size=6))
            lists[(model, user)] = items
            relevant[(model, user)] = set()
            for position, item in enumerate(items, 1):
                grade = draw(st.sampled_from([0, 1]))
                rows.append({"model": model, "user_id": user, "item_id": item, "rank": position, "relevance": grade})
                if grade:
                    relevant[(model, user)].add(item)
            if not items:  # a user with nothing recommended: a relevant item, not ranked
                rows.append({"model": model, "user_id": user, "item_id": "i0", "rank": None, "relevance": 1})
    train = draw(st.lists(st.tuples(st.integers(0, 6), st.sampled_from(ITEM_POOL)), min_size=1, max_size=25))
    genres = draw(st.lists(st.sampled_from(["x", "y", "z"]), min_size=8, max_size=8))
    vectors = draw(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 3)), min_size=8, max_size=8))
    # label sets (genres of a film): one to three, a label repeated in a list counting once
    tags = draw(st.lists(st.lists(st.sampled_from(["p", "q", "r", "s"]), min_size=1, max_size=3), min_size=8, max_size=8))
    return {
        "frame": pl.DataFrame(
            rows, schema={"model": pl.String, "user_id": pl.Int64, "item_id": pl.String, "rank": pl.Int64, "relevance": pl.Int64}
        ),
        "lists": lists,
        "relevant": relevant,
        "train": train,
        "items": pl.DataFrame(
            {
                "item_id": ITEM_POOL,
                "genre": genres,
                "tags": tags,
                "v1": [float(a) for a, _ in vectors],
                "v2": [float(b) for _, b in vectors],
            }
        ),
        "k": draw(st.sampled_from([1, 2, 3, 5])),
        "novelty": draw(st.sampled_from(["self_information", "surprisal"])),
        "popularity": draw(st.sampled_from(["count", "share"])),
        "cold_items": draw(st.sampled_from(["count", "skip"])),
        "distance": draw(st.sampled_from(["hamming", "cosine", "jaccard"])),
        "head_share": draw(st.sampled_from([0.2, 0.5, 0.9])),
        "baseline": models[0],
    }


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_beyond_accuracy_matches_the_reference(backend: str) -> None:
    convert = BACKENDS[backend]

    @settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(beyond_cases())
    def run(case: dict[str, Any]) -> None:
        train_users = {u for u, _ in case["train"]}
        if case["novelty"] == "surprisal" and len(train_users) < 2:
            case["novelty"] = "self_information"
        features = {"hamming": ["genre"], "cosine": ["v1", "v2"], "jaccard": ["tags", "genre"]}[case["distance"]]
        items = case["items"]
        want_users, want_groups = reference.beyond(
            case["lists"],
            case["train"],
            {
                r["item_id"]: tuple(tuple(r[f]) if isinstance(r[f], list) else r[f] for f in features)
                for r in items.iter_rows(named=True)
            },
            case["k"],
            novelty=case["novelty"],
            popularity=case["popularity"],
            cold_items=case["cold_items"],
            distance_kind=case["distance"],
            head_share=case["head_share"],
            baseline=case["baseline"],
            relevant=case["relevant"],
        )
        train = pl.DataFrame(case["train"], schema={"user_id": pl.Int64, "item_id": pl.String}, orient="row")
        options = {
            "k": case["k"],
            "by": "model",
            "train": convert(train),
            "items": convert(items),
            "item_features": features,
            "baseline": case["baseline"],
            "novelty": case["novelty"],
            "popularity": case["popularity"],
            "cold_items": case["cold_items"],
            "distance": case["distance"],
            "head_share": case["head_share"],
        }
        k = case["k"]
        got = to_polars(recframe.per_user(convert(case["frame"]), metrics=list(reference.BEYOND_USER), **options))
        seen = set()
        for row in got.iter_rows(named=True):
            key = (row["model"], row["user_id"])
            seen.add(key)
            for metric in reference.BEYOND_USER:
                want, value = want_users[key][metric], row[f"{metric}@{k}"]
                if not case["relevant"].get(key):  # empty_users="skip": left out of the means, so null
                    want = None
                assert (value is None) == (want is None) and (want is None or value == pytest.approx(want, abs=1e-9)), (
                    key,
                    metric,
                    value,
                    want,
                )
        assert seen == {key for key, items in case["lists"].items() if items}  # nothing recommended: no row
        summary = to_polars(recframe.summary(convert(case["frame"]), metrics=list(reference.BEYOND_GROUP), **options))
        for row in summary.iter_rows(named=True):
            for metric in reference.BEYOND_GROUP:
                want, value = want_groups[row["model"]][metric], row[f"{metric}@{k}"]
                assert (value is None) == (want is None) and (want is None or value == pytest.approx(want, abs=1e-9)), (
                    row["model"],
                    metric,
                    value,
                    want,
                )

    run()


# ------------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("metric", "kwargs", "message"),
    [
        ("novelty", {}, r"metric 'novelty' needs train=, which was not given.*training interactions"),
        ("ild", {"items": ITEMS}, r"metric 'ild' needs item_features="),
        ("ild", {"item_features": ["genre"]}, r"metric 'ild' needs items="),
        ("intersection", {}, r"metric 'intersection' needs baseline="),
        ("catalog_coverage", {}, r"'catalog_coverage' needs the catalog: items= .* or train="),
    ],
)
def test_a_missing_side_input_names_the_metric_and_the_argument(metric: str, kwargs: dict, message: str) -> None:
    with pytest.raises(RecframeError, match=message):
        recframe.summary(FRAME, k=2, metrics=[metric], **kwargs)


@pytest.mark.parametrize("profile", ["recframe", "rectools", "replay", "recommenders", "trec_eval", "ranx", "lenskit"])
def test_the_default_metrics_need_no_side_input_under_every_profile(profile: str) -> None:
    # a profile whose peer has beyond-accuracy metrics still defaults to its accuracy metrics
    df = FRAME.with_columns(score=1.0 / pl.col("rank"))
    for function in (recframe.per_user, recframe.summary):
        out = function(df, k=2, profile=profile, score="score")
        beyond = [c for c in out.columns if c.split("@")[0] in reference.BEYOND_USER + reference.BEYOND_GROUP]
        assert not beyond, (profile, beyond)


def test_per_user_refuses_group_metrics_naming_summary() -> None:
    with pytest.raises(RecframeError, match=r"'gini' has one value per group.*use summary"):
        recframe.per_user(FRAME, k=2, metrics=["gini"], items=ITEMS)


def test_a_recommended_item_outside_the_catalog_is_named() -> None:
    small = ITEMS.filter(pl.col("item_id") != "d")
    with pytest.raises(RecframeError, match=r"item 'd' is ranked within k at user_id=2 but is not in items="):
        recframe.summary(FRAME, k=2, metrics=["catalog_coverage"], items=small)
    with pytest.raises(RecframeError, match=r"item 'd' .* not in the items of train="):
        recframe.summary(FRAME, k=2, metrics=["gini"], train=TRAIN)
    # past k it cannot change a number
    recframe.summary(FRAME, k=1, metrics=["catalog_coverage"], items=small)


@pytest.mark.parametrize(
    ("items", "kwargs", "message"),
    [
        (pl.concat([ITEMS, ITEMS.head(1)]), {}, r"items= has 6 rows but 5 distinct 'item_id' values"),
        (
            ITEMS.with_columns(pl.lit(None, pl.String).alias("genre")),
            {},
            r"column 'genre' of items= \(item_features=\) has 5 null",
        ),
        (ITEMS, {"distance": "cosine"}, r"column 'genre' of items= \(item_features=\) is String.*needs numbers"),
        (
            ITEMS.with_columns(v1=0.0, v2=0.0),
            {"distance": "cosine", "item_features": ["v1", "v2"]},
            r"5 item\(s\) whose item_features= vector is all zeros",
        ),
        (
            ITEMS.with_columns(v1=float("nan")),
            {"distance": "cosine", "item_features": ["v1"]},
            r"column 'v1' of items= has 5 NaN",
        ),
    ],
)
def test_bad_items_are_refused(items: pl.DataFrame, kwargs: dict, message: str) -> None:
    options = {"item_features": ["genre"], **kwargs}
    with pytest.raises(RecframeError, match=message):
        recframe.per_user(FRAME, k=2, metrics=["ild"], items=items, **options)


def test_bad_train_and_arguments_are_refused() -> None:
    with pytest.raises(RecframeError, match=r"column 'item_id' of train= has 1 null"):
        recframe.per_user(
            FRAME,
            k=2,
            metrics=["novelty"],
            train=TRAIN.with_columns(pl.when(pl.col("user_id") == 4).then(None).otherwise(pl.col("item_id")).alias("item_id")),
        )
    with pytest.raises(RecframeError, match=r"train= has no rows"):
        recframe.per_user(FRAME, k=2, metrics=["novelty"], train=TRAIN.head(0))
    with pytest.raises(RecframeError, match=r'novelty="surprisal" divides by log2 of the training users'):
        recframe.per_user(FRAME, k=2, metrics=["novelty"], train=TRAIN.head(1), novelty="surprisal")
    for bad in (1.5, 0, "x", None, float("nan")):
        with pytest.raises(RecframeError, match=r"head_share=.* must be a number strictly between 0 and 1.*head_share=0.2"):
            recframe.per_user(FRAME, k=2, metrics=["long_tail"], train=TRAIN, head_share=bad)
    with pytest.raises(RecframeError, match=r"item_features=\['genre'\] names columns of items=, which was not given"):
        recframe.per_user(FRAME, k=2, item_features="genre")
    with pytest.raises(RecframeError, match=r"train= is missing the column 'user_id'|column 'user_id'.*train"):
        recframe.per_user(FRAME, k=2, metrics=["novelty"], train=TRAIN.rename({"user_id": "u"}))


def test_baseline_needs_one_model_key_and_a_known_value() -> None:
    with pytest.raises(RecframeError, match=r"baseline='pop' names a model, which needs exactly one model key in by="):
        recframe.per_user(FRAME, k=2, metrics=["intersection"], baseline="pop")
    two = FRAME.with_columns(model=pl.lit("A"))
    with pytest.raises(RecframeError, match=r"baseline='pop' matches no row of column 'model'"):
        recframe.per_user(two, k=2, metrics=["intersection"], baseline="pop", by="model")


# ------------------------------------------------------------------------ label sets, magnitudes

GENRES = pl.DataFrame(
    {"item_id": ["a", "b", "c", "d"], "genres": [["Action", "Comedy"], ["Action"], ["Drama", "Drama"], ["Comedy", "Action"]]}
)
LISTS = pl.DataFrame({"user_id": [1, 1, 1, 2, 2], "item_id": ["a", "b", "c", "a", "d"], "rank": [1, 2, 3, 1, 2], "relevance": 1})


def test_jaccard_ild_and_categories_over_label_sets(constructor) -> None:
    """User 1 ranks a {Action, Comedy}, b {Action}, c {Drama}: a-b 1 - 1/2, a-c 1, b-c 1, so
    ild@2 = 1/2 and ild@3 = (1/2 + 1 + 1) / 3; labels Action, Comedy in the top 2 (2/2), Drama
    too in the top 3 (3/3). User 2: a and d hold the same set: ild 0; 2 labels over k."""
    out = to_polars(
        recframe.per_user(
            constructor(LISTS), k=[2, 3], items=constructor(GENRES), item_features="genres", distance="jaccard",
            metrics=["ild", "category_diversity"],
        )
    )  # fmt: skip
    assert out.select("ild@2", "ild@3", "category_diversity@2", "category_diversity@3").rows() == [
        pytest.approx((1 / 2, (1 / 2 + 1 + 1) / 3, 2 / 2, 3 / 3)),
        pytest.approx((0.0, 0.0, 2 / 2, 2 / 3)),
    ]


@pytest.mark.parametrize("distance", ["hamming", "cosine"])
def test_a_label_list_under_another_distance_is_refused_naming_jaccard(constructor, distance) -> None:
    with pytest.raises(
        RecframeError,
        match=rf"'genres' .*holds List\(String\): label sets, which distance=\"{distance}\".*Hint: pass distance=\"jaccard\"",
    ):
        recframe.per_user(
            constructor(LISTS), k=2, items=constructor(GENRES), item_features="genres", distance=distance, metrics=["ild"]
        )


@pytest.mark.parametrize(
    ("labels", "match"), [([[], ["x"]], r"1 empty label list\(s\)"), ([["x", None], ["x"]], r"a null label inside a list")]
)
def test_empty_or_null_labels_are_refused(labels, match) -> None:
    items = pl.DataFrame({"item_id": ["a", "b"], "genres": labels})
    frame = LISTS.filter(pl.col("item_id").is_in(["a", "b"]))
    with pytest.raises(RecframeError, match=match):
        recframe.per_user(frame, k=2, items=items, item_features="genres", distance="jaccard", metrics=["ild"])


@pytest.mark.parametrize("magnitude", [1e200, 1e-200, 1.0])
def test_cosine_scales_before_it_squares(constructor, magnitude) -> None:
    """a and b point the same way, c at right angles: ild@2 (a, b) = 0 and ild@3 = (0 + 1 + 1) / 3
    at every magnitude (1e200 squared overflows, 1e-200 squared underflows to zero)."""
    items = pl.DataFrame({"item_id": ["a", "b", "c"], "x": [1.0, 2.0, 0.0], "y": [1.0, 2.0, 3.0]})
    items = items.with_columns(pl.col("x", "y") * magnitude)
    out = to_polars(
        recframe.per_user(
            constructor(LISTS.filter(pl.col("user_id") == 1)), k=[2, 3], items=constructor(items), item_features=["x", "y"],
            distance="cosine", metrics=["ild"],
        )
    )  # fmt: skip
    assert out.select("ild@2", "ild@3").row(0) == pytest.approx((0.0, (0 + (1 - 1 / 2**0.5) * 2) / 3), abs=1e-12)


def test_nan_in_a_hamming_feature_is_refused_on_every_backend(constructor) -> None:
    # (pandas reads NaN as its missing value: refused as a null, the same outcome)
    items = pl.DataFrame({"item_id": ["a", "b", "c", "d"], "size": [1.0, float("nan"), 2.0, 1.0]})
    with pytest.raises(RecframeError, match=r"column 'size' of items= .*has 1 (NaN|null) value\(s\)"):
        to_polars(recframe.per_user(constructor(LISTS), k=2, items=constructor(items), item_features="size", metrics=["ild"]))
