"""Item groups (item_group=): recframe.item_groups, pop_rsp, pop_reo, exposure_disparity and
calibration: worked by hand, against Elliot's definitions, against the reference on every
backend, and hostile inputs."""

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

# two users' lists: user 1 trained on a (pop) and c (jazz), user 2 on b (pop), d (jazz), e (folk)
RECS = pl.DataFrame(
    {
        "user_id": [1, 1, 1, 2, 2, 2],
        "item_id": ["a", "b", "c", "a", "d", "e"],
        "rank": [1, 2, None, 1, 2, 3],
        "relevance": [1, 0, 1, 0, 1, None],
    }
)
ITEMS = pl.DataFrame({"item_id": list("abcde"), "genre": ["pop", "pop", "jazz", "jazz", "folk"]})
TRAIN = pl.DataFrame({"user_id": [1, 1, 2, 2, 2], "item_id": ["a", "c", "b", "d", "e"]})
KW: dict[str, Any] = {"items": ITEMS, "train": TRAIN, "item_group": "genre"}


# ------------------------------------------------------------------------- worked by hand


def test_miscalibration_and_js_worked_by_hand() -> None:
    # user 1: p = {pop: 1/2, jazz: 1/2} (a, c); top 2 = a, b: q = {pop: 1}
    # q~ = 0.99 q + 0.01 p = {pop: 0.995, jazz: 0.005}
    # KL = 1/2 ln(0.5 / 0.995) + 1/2 ln(0.5 / 0.005)
    # m = {pop: 3/4, jazz: 1/4}: JS = (1/2 log2(2/3) + 1/2 log2(2) + 1 log2(4/3)) / 2
    out = recframe.per_user(RECS, k=2, metrics=["miscalibration", "calibration_js"], **KW)
    row = out.row(0, named=True)
    assert row["miscalibration@2"] == pytest.approx(0.5 * math.log(0.5 / 0.995) + 0.5 * math.log(100), abs=1e-12)
    assert row["calibration_js@2"] == pytest.approx((0.5 * math.log2(2 / 3) + 0.5 + math.log2(4 / 3)) / 2, abs=1e-12)
    # user 2: p = {pop, jazz, folk: 1/3 each}; top 2 = a, d: q = {pop: 1/2, jazz: 1/2}
    q = {"pop": 0.5, "jazz": 0.5, "folk": 0.0}
    kl = sum(1 / 3 * math.log((1 / 3) / (0.99 * q[g] + 0.01 / 3)) for g in q)
    assert out.row(1, named=True)["miscalibration@2"] == pytest.approx(kl, abs=1e-12)


def test_rank_weighted_mix_and_alpha() -> None:
    # calibration_weight="rank": a weighs 1, b 1/log2(3): q is all pop either way for user 1,
    # but for user 2 a (pop) weighs 1 and d (jazz) 1/log2(3)
    out = recframe.per_user(RECS, k=2, metrics=["miscalibration"], calibration_weight="rank", calibration_alpha=0.1, **KW).row(
        1, named=True
    )
    d = 1 / math.log2(3)
    q = {"pop": 1 / (1 + d), "jazz": d / (1 + d), "folk": 0.0}
    want = sum(1 / 3 * math.log((1 / 3) / (0.9 * q[g] + 0.1 / 3)) for g in q)
    assert out["miscalibration@2"] == pytest.approx(want, abs=1e-12)


def test_a_user_without_training_items_is_null_and_left_out() -> None:
    train = TRAIN.filter(pl.col("user_id") == 2)
    out = recframe.per_user(RECS, k=2, metrics=["miscalibration", "precision"], items=ITEMS, train=train, item_group="genre")
    assert out["miscalibration@2"].to_list()[0] is None
    mean = recframe.summary(RECS, k=2, metrics=["miscalibration"], items=ITEMS, train=train, item_group="genre")
    assert mean["miscalibration@2"].item() == pytest.approx(out["miscalibration@2"].to_list()[1])


def test_item_groups_table_worked_by_hand() -> None:
    out = recframe.item_groups(RECS, k=2, **KW)
    assert out.columns == [
        "genre",
        "n_items",
        "catalog_share",
        "relevant_share",
        "rec_share@2",
        "exposure_share@2",
        "group_recall@2",
        "p_rec@2",
    ]
    rows = {r["genre"]: r for r in out.iter_rows(named=True)}
    assert list(rows) == ["folk", "jazz", "pop"]
    # catalog: 2 pop, 2 jazz, 1 folk; relevant pairs: (1, a) pop, (1, c) jazz, (2, d) jazz
    assert [rows[g]["catalog_share"] for g in ("folk", "jazz", "pop")] == pytest.approx([0.2, 0.4, 0.4])
    assert [rows[g]["relevant_share"] for g in ("folk", "jazz", "pop")] == pytest.approx([0, 2 / 3, 1 / 3])
    # slots within 2: a, b (user 1), a, d (user 2): pop 3, jazz 1
    assert [rows[g]["rec_share@2"] for g in ("folk", "jazz", "pop")] == pytest.approx([0, 0.25, 0.75])
    d2 = 1 / math.log2(3)
    assert rows["jazz"]["exposure_share@2"] == pytest.approx(d2 / (2 + 2 * d2))
    # hits: a for user 1 (pop), d for user 2 (jazz); folk has no relevant item: undefined
    assert rows["pop"]["group_recall@2"] == 1.0 and rows["jazz"]["group_recall@2"] == 0.5
    assert rows["folk"]["group_recall@2"] is None
    # p_rec: slots on items the user has not trained on / (2 lists x |g| - their users' training
    # items in g): pop b (user 1) and a (user 2), not a for user 1 (trained); jazz d is user 2's
    # training item. A probability: never above 1 (it was 3 / 2 when trained items counted)
    assert rows["pop"]["p_rec@2"] == pytest.approx(2 / (2 * 2 - 2))
    assert rows["jazz"]["p_rec@2"] == pytest.approx(0 / (2 * 2 - 2))
    assert rows["folk"]["p_rec@2"] == pytest.approx(0 / (2 * 1 - 1))


def test_comparing_metrics_worked_by_hand() -> None:
    out = recframe.summary(RECS, k=2, metrics=["pop_rsp", "pop_reo", "exposure_disparity"], **KW).row(0, named=True)
    rates = [0.0, 0.0, 1.0]  # p_rec of folk, jazz, pop (see the table above)
    mean = sum(rates) / 3
    assert out["pop_rsp@2"] == pytest.approx(math.sqrt(sum((r - mean) ** 2 for r in rates) / 3) / mean)
    # folk has no relevant item: its recall, hence pop_reo and the exposure ratio, are undefined
    assert out["pop_reo@2"] is None and out["exposure_disparity@2"] is None
    two = ITEMS.filter(pl.col("genre") != "folk")
    recs = RECS.filter(pl.col("item_id") != "e")
    out = recframe.summary(recs, k=2, metrics=["pop_reo", "exposure_disparity"], items=two, train=TRAIN, item_group="genre").row(
        0, named=True
    )
    recall = [0.5, 1.0]  # jazz, pop
    assert out["pop_reo@2"] == pytest.approx(0.25 / 0.75)
    assert recall == [0.5, 1.0]
    d2 = 1 / math.log2(3)
    exposure = {"pop": (2 + d2) / (2 + 2 * d2), "jazz": d2 / (2 + 2 * d2)}
    ratios = [exposure["pop"] / (1 / 3), exposure["jazz"] / (2 / 3)]
    assert out["exposure_disparity@2"] == pytest.approx(max(ratios) / min(ratios))


def test_a_group_with_relevant_items_and_no_exposure_is_infinitely_disparate() -> None:
    recs = pl.DataFrame({"user_id": [1, 1], "item_id": ["a", "c"], "rank": [1, None], "relevance": [1, 1]})
    out = recframe.summary(recs, k=1, metrics=["exposure_disparity"], items=ITEMS.head(4), item_group="genre")
    assert out["exposure_disparity@1"].item() == math.inf


def test_list_groups_spread_the_weight_and_popularity_groups() -> None:
    items = pl.DataFrame({"item_id": list("abcde"), "tags": [["x"], ["x", "y", "x"], ["y"], ["y"], ["z"]]})
    out = recframe.item_groups(RECS, k=2, items=items, item_group="tags")
    rows = {r["tags"]: r for r in out.iter_rows(named=True)}
    # b is half x, half y (its repeated x counts once)
    assert rows["x"]["n_items"] == 1.5 and rows["y"]["n_items"] == 2.5
    assert rows["x"]["rec_share@2"] == pytest.approx((1 + 0.5 + 1) / 4)
    # popularity: every training item has one user, so (ties never split) all are in the head
    pop = recframe.item_groups(
        RECS,
        k=2,
        items=ITEMS.vstack(pl.DataFrame({"item_id": ["f"], "genre": ["x"]})),
        train=TRAIN,
        item_group="popularity",
        head_share=0.5,
    )
    assert pop["popularity"].to_list() == ["head", "tail"]
    assert pop["n_items"].to_list() == [5.0, 1.0]


def test_relevant_items_outside_the_catalog_get_a_row_of_their_own() -> None:
    recs = RECS.vstack(pl.DataFrame({"user_id": [2], "item_id": ["zz"], "rank": [None], "relevance": [1]}, schema=RECS.schema))
    out = recframe.item_groups(recs, k=2, items=ITEMS, item_group="genre")
    last = out.row(-1, named=True)
    assert last["genre"] is None and last["relevant_share"] == 0.25 and last["catalog_share"] == 0.0


# ------------------------------------------------------------------------- Elliot


def elliot_split(popularity: dict[str, int], transactions: int, ratio: float = 0.8) -> tuple[set, set]:
    """Elliot's Popularity.get_short_head: items by decreasing popularity, added until their
    pairs reach ratio x transactions (the item crossing the limit is in)."""
    head, limit = [], transactions * ratio
    for item, pop in sorted(popularity.items(), key=lambda x: -x[1]):
        head.append(item)
        limit -= pop
        if limit <= 0:
            break
    return set(head), set(popularity) - set(head)


def test_elliot_aclt_aplt_arp_poprsp_popreo() -> None:
    """Elliot's bias metrics re-derived from its code (elliot/evaluation/metrics/bias): per
    user over the recommendations, PopRSP and PopREO from summed numerators and denominators
    over the head and tail, np.std (ddof=0) / np.mean. Data without ties at the head's edge
    (Elliot orders tied items arbitrarily, recframe never splits them), no relevant item in
    train= and every user with a relevant item (Elliot's PopREO and means read the users of
    its recommendations only)."""
    train_pairs = [(u, i) for u, items in {1: "abc", 2: "abd", 3: "ae", 4: "bf", 5: "a"}.items() for i in items]
    popularity = {i: sum(1 for _, j in train_pairs if j == i) for i in "abcdef"}  # a 4, b 3, c d e f 1
    # pop_ratio 0.5: a (4 pairs) and b (3) cross the limit of 5.5 pairs; c ties d, e, f after it
    head, tail = elliot_split(popularity, len(train_pairs), ratio=0.5)
    assert head == {"a", "b"}
    recs = {1: ["d", "e", "f"], 2: ["c", "e", "f"], 3: ["b", "c", "d"], 4: ["a", "c", "d"], 5: ["b", "f", "c"]}
    liked = {1: {"e"}, 2: {"f", "a"}, 3: {"c"}, 4: {"d", "e"}, 5: {"c", "b"}}
    liked[2].discard("a")  # relevant items outside train only
    k = 2
    trained = {u: {i for v, i in train_pairs if v == u} for u in recs}
    aclt = {u: len(set(r[:k]) & tail) for u, r in recs.items()}
    aplt = {u: len(set(r[:k]) & tail) / len(r[:k]) for u, r in recs.items()}
    arp = {u: sum(popularity[i] for i in r[:k]) / len(r[:k]) for u, r in recs.items()}
    num = [sum(len(set(r[:k]) & g) for r in recs.values()) for g in (head, tail)]
    den = [sum(len(g - trained[u]) for u in recs) for g in (head, tail)]
    rates = [a / b for a, b in zip(num, den)]
    pop_rsp = (sum((r - sum(rates) / 2) ** 2 for r in rates) / 2) ** 0.5 / (sum(rates) / 2)
    num = [sum(len({i for i in r[:k] if i in liked[u]} & g) for u, r in recs.items()) for g in (head, tail)]
    den = [sum(len((g & liked[u]) - trained[u]) for u in recs) for g in (head, tail)]
    rates = [a / b for a, b in zip(num, den)]
    pop_reo = (sum((r - sum(rates) / 2) ** 2 for r in rates) / 2) ** 0.5 / (sum(rates) / 2)

    frame = pl.DataFrame(
        [
            {"user_id": u, "item_id": i, "rank": r, "relevance": 1 if i in liked[u] else 0}
            for u, items in recs.items()
            for r, i in enumerate(items, 1)
        ]
        + [{"user_id": u, "item_id": i, "rank": None, "relevance": 1} for u in recs for i in liked[u] if i not in recs[u]]
    )
    train = pl.DataFrame(train_pairs, schema=["user_id", "item_id"], orient="row")
    # Elliot's pop_ratio is the share of pairs the head holds: head_share
    options = {"k": k, "train": train, "head_share": 0.5}
    per_user = recframe.per_user(frame, metrics=["aclt", "long_tail", "popularity"], **options)
    for row in per_user.iter_rows(named=True):
        u = row["user_id"]
        assert row["aclt@2"] == aclt[u] and row["long_tail@2"] == pytest.approx(aplt[u], abs=1e-12)
        assert row["popularity@2"] == pytest.approx(arp[u], abs=1e-12)
    out = recframe.summary(frame, metrics=["pop_rsp", "pop_reo"], item_group="popularity", **options).row(0, named=True)
    assert out["pop_rsp@2"] == pytest.approx(pop_rsp, abs=1e-12)
    assert out["pop_reo@2"] == pytest.approx(pop_reo, abs=1e-12)


# ------------------------------------------------------------------------ against the reference

POOL = [f"i{j}" for j in range(8)]


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    rows, lists, relevant = [], {}, {}
    for model in ("A", "B"):
        for user in range(draw(st.integers(1, 4))):
            items = draw(st.lists(st.sampled_from(POOL), unique=True, max_size=5))
            key = (model, user)
            lists[key], relevant[key] = items, set()
            for position, item in enumerate(items, 1):
                grade = draw(st.sampled_from([0, 1]))
                rows.append({"model": model, "user_id": user, "item_id": item, "rank": position, "relevance": grade})
                if grade:
                    relevant[key].add(item)
            # relevant items never recommended, one of them maybe outside the catalog
            for item in draw(st.lists(st.sampled_from([*POOL, "out"]), unique=True, max_size=2)):
                if item not in items:
                    rows.append({"model": model, "user_id": user, "item_id": item, "rank": None, "relevance": 1})
                    relevant[key].add(item)
            if not items and not relevant[key]:  # every list has a row: a relevant item, not ranked
                rows.append({"model": model, "user_id": user, "item_id": "i0", "rank": None, "relevance": 1})
                relevant[key].add("i0")
    labels = draw(st.lists(st.lists(st.sampled_from("xyz"), min_size=1, max_size=3), min_size=8, max_size=8))
    genres = ["x", "y", *draw(st.lists(st.sampled_from("xyz"), min_size=6, max_size=6))]
    return {
        "frame": pl.DataFrame(
            rows, schema={"model": pl.String, "user_id": pl.Int64, "item_id": pl.String, "rank": pl.Int64, "relevance": pl.Int64}
        ),
        "lists": lists,
        "relevant": relevant,
        "train": draw(st.lists(st.tuples(st.integers(0, 5), st.sampled_from([*POOL, "cold"])), min_size=1, max_size=20)),
        "items": pl.DataFrame({"item_id": POOL, "genre": genres, "tags": labels}),
        "kind": draw(st.sampled_from(["genre", "tags", "popularity"])),
        "k": draw(st.sampled_from([1, 2, 3])),
        "weight": draw(st.sampled_from(["uniform", "rank"])),
        "alpha": draw(st.sampled_from([0.01, 0.3])),
        "head_share": draw(st.sampled_from([0.3, 0.6])),
    }


def _same(value: Any, want: Any, where: Any) -> None:
    ok = (value is None) == (want is None) and (want is None or value == pytest.approx(want, rel=1e-9, abs=1e-12))
    assert ok, (where, value, want)


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_item_group_metrics_match_the_reference(backend: str) -> None:
    convert = BACKENDS[backend]

    @settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(cases())
    def run(case: dict[str, Any]) -> None:
        items, kind, k = case["items"], case["kind"], case["k"]
        if kind == "popularity":
            pop: dict[str, set] = {}
            for u, i in set(case["train"]):
                pop.setdefault(i, set()).add(u)
            head = reference.head_items({i: len(us) for i, us in pop.items()}, case["head_share"])
            groups = {i: ["head" if i in head else "tail"] for i in POOL}
        else:
            groups = {r["item_id"]: list(r[kind]) if kind == "tags" else [r[kind]] for r in items.iter_rows(named=True)}
        want_lists, want_models = reference.item_groups(
            case["lists"], case["relevant"], case["train"], groups, k, weight=case["weight"], alpha=case["alpha"]
        )
        train = pl.DataFrame(case["train"], schema={"user_id": pl.Int64, "item_id": pl.String}, orient="row")
        options = {
            "k": k,
            "by": "model",
            "train": convert(train),
            "items": convert(items),
            "item_group": kind,
            "head_share": case["head_share"],
            "calibration_weight": case["weight"],
            "calibration_alpha": case["alpha"],
        }
        frame = convert(case["frame"])
        got = to_polars(recframe.per_user(frame, metrics=list(reference.ITEM_GROUP_USER), **options))
        for row in got.iter_rows(named=True):
            key = (row["model"], row["user_id"])
            for metric in reference.ITEM_GROUP_USER:
                want = want_lists[key][metric] if case["relevant"][key] else None  # empty_users="skip"
                _same(row[f"{metric}@{k}"], want, (key, metric))
        table = to_polars(recframe.item_groups(frame, **options))
        for row in table.iter_rows(named=True):
            want_row = want_models[row["model"]]["table"][row[kind]]
            for column in ("catalog_share", "relevant_share", "rec_share", "exposure_share", "group_recall", "p_rec"):
                _same(
                    row[column if column.endswith("share") and "@" not in column and column in row else f"{column}@{k}"]
                    if f"{column}@{k}" in row
                    else row[column],
                    want_row[column],
                    (row["model"], row[kind], column),
                )
        assert len(table) == sum(len(m["table"]) for m in want_models.values())
        if len({g for gs in groups.values() for g in gs}) < 2:
            with pytest.raises(RecframeError, match="a disparity needs two"):
                recframe.summary(frame, metrics=list(reference.ITEM_GROUP_GROUP), **options)
            return
        summary = to_polars(recframe.summary(frame, metrics=list(reference.ITEM_GROUP_GROUP), **options))
        for row in summary.iter_rows(named=True):
            for metric in reference.ITEM_GROUP_GROUP:
                _same(row[f"{metric}@{k}"], want_models[row["model"]][metric], (row["model"], metric))

    run()


# ------------------------------------------------------------------------ hostile inputs


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"items": ITEMS.with_columns(pl.when(pl.col("item_id") == "b").then(None).otherwise(pl.col("genre")).alias("genre"))},
            r"column 'genre' of items= \(item_group=\) has 1 null value",
        ),
        ({"items": pl.DataFrame({"item_id": list("abcde"), "genre": [["x"], [], ["y"], ["y"], ["z"]]})}, r"has 1 empty list"),
        (
            {"items": pl.DataFrame({"item_id": list("abcde"), "genre": [["x"], ["x", None], ["y"], ["y"], ["z"]]})},
            r"a null group inside a list",
        ),
        ({"items": ITEMS.with_columns(pl.lit("pop").alias("genre"))}, r"metric 'pop_reo' compares item groups.*gives 1 group"),
        ({"item_group": None}, r"metric 'pop_reo' needs item_group="),
        ({"item_group": 3}, r"item_group=3 must be the name of a column"),
        ({"items": None}, r"item_group='genre' names a column of items=, which was not given"),
        ({"item_group": "popularity", "train": None}, r"item_group=\"popularity\" splits .* train=, which was not given"),
        ({"item_group": "year"}, r"year"),
        (
            {"item_group": "popularity", "items": ITEMS.with_columns(pl.lit(1).alias("popularity"))},
            r"also has a column 'popularity'",
        ),
    ],
)
def test_hostile_item_groups_are_refused(kwargs: dict[str, Any], message: str) -> None:
    options = {**KW, **kwargs}
    with pytest.raises(RecframeError, match=message):
        recframe.summary(RECS, k=2, metrics=["pop_reo"], **options)


def test_calibration_and_pop_rsp_need_train() -> None:
    for metric in ("miscalibration", "pop_rsp"):
        with pytest.raises(RecframeError, match=rf"metric '{metric}' needs train="):
            recframe.summary(RECS, k=2, metrics=[metric], items=ITEMS, item_group="genre")


def test_item_groups_needs_item_group_and_refuses_items_outside_the_catalog() -> None:
    with pytest.raises(RecframeError, match=r"item_groups\(\) needs item_group=|needs item_group="):
        recframe.item_groups(RECS, k=2, items=ITEMS)
    with pytest.raises(RecframeError, match=r"ranked within k at user_id=2 but is not in items=.*item groups read the catalog"):
        recframe.item_groups(RECS, k=3, items=ITEMS.head(4), item_group="genre")


def test_namespace_and_lazy_frames() -> None:
    eager = recframe.item_groups(RECS, k=2, **KW)
    assert RECS.recmetrics.item_groups(k=2, **KW).equals(eager)
    lazy = RECS.lazy().recmetrics.item_groups(k=2, **{**KW, "items": ITEMS.lazy(), "train": TRAIN.lazy()})
    assert isinstance(lazy, pl.LazyFrame) and lazy.collect().equals(eager)


# ------------------------------------------------------------------------ the chart


def test_plot_exposure_draws_relevance_then_each_models_exposure() -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    recs = pl.concat([RECS.with_columns(model=pl.lit("A")), RECS.with_columns(model=pl.lit("B"), rank=pl.col("rank").reverse())])
    table = recframe.item_groups(recs, k=[2, 3], by="model", **KW)
    fig = recframe.plot.exposure(table, k=2)
    (ax,) = fig.axes
    bars = ax.patches
    groups = ["folk", "jazz", "pop"]
    relevant = table.filter(pl.col("model") == "A")["relevant_share"].to_list()
    # three bars per group: relevance, then A's and B's exposure, cluster by cluster
    assert [round(b.get_height(), 12) for b in bars[:3]] == [round(x, 12) for x in relevant]
    assert [round(b.get_height(), 12) for b in bars[3:6]] == [
        round(x, 12) for x in table.filter(pl.col("model") == "A")["exposure_share@2"].to_list()
    ]
    assert [t.get_text() for t in ax.get_xticklabels()] == groups
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["relevant items", "exposure: A", "exposure: B"]
    with pytest.raises(RecframeError, match=r"cut-offs \[2, 3\]. Hint: pass k="):
        recframe.plot.exposure(table)
    with pytest.raises(RecframeError, match=r"pass the output of recframe.item_groups"):
        recframe.plot.exposure(RECS)
    plt = pytest.importorskip("matplotlib.pyplot")
    plt.close("all")


def test_report_lays_out_an_item_groups_table() -> None:
    table = recframe.item_groups(RECS, k=2, **KW)
    text = recframe.report(table, precision=2)
    lines = text.splitlines()
    assert lines[0] == (
        "| genre | n_items | catalog_share | relevant_share | rec_share@2 | exposure_share@2 | exposure/relevant@2 "
        "| group_recall@2 |"
    )
    # jazz: 2/3 of the relevant items, d2 / (2 + 2 d2) of the exposure: a ratio under 0.5, bold
    ratio = (1 / math.log2(3)) / (2 + 2 / math.log2(3)) / (2 / 3)
    # n_items is a count: a whole number, printed as one (issue 38)
    assert lines[3] == f"| jazz | 2 | 0.40 | 0.67 | 0.25 | 0.19 | **{ratio:.2f}** | 0.50 |"
    assert lines[2].startswith("| folk | 1 | 0.20 | 0.00 | 0.00 | 0.00 |  |  |")  # no relevant item: no ratio, no recall
    assert "<table>" in recframe.report(table, format="html")


# ---------------------------------------------------------------------------- NaN groups and n_items

GROUP_RECS = pl.DataFrame(
    {
        "user_id": [1, 1, 1, 2, 2],
        "item_id": ["a", "b", "c", "a", "c"],
        "rank": [1, 2, None, 1, 2],
        "relevance": [1, None, 1, None, 1],
    }
)


@pytest.mark.parametrize("backend", ["polars", "lazy", "pandas"])
def test_a_nan_item_group_is_refused_alike_on_every_backend(backend: str) -> None:
    items = pl.DataFrame({"item_id": ["a", "b", "c"], "genre": [1.0, float("nan"), 2.0]})
    recs: object = GROUP_RECS
    side: object = items
    if backend == "lazy":
        recs, side = GROUP_RECS.lazy(), items.lazy()
    elif backend == "pandas":
        recs, side = GROUP_RECS.to_pandas(), items.to_pandas()
    with pytest.raises(RecframeError, match=r"column 'genre' of items= \(item_group=\) has 1 null or NaN value") as caught:
        out = recframe.item_groups(recs, k=2, items=side, item_group="genre")
        if isinstance(out, pl.LazyFrame):
            out.collect()
    assert caught.value.argument == "items"


def test_a_nan_inside_a_label_list_group_is_refused() -> None:
    items = pl.DataFrame({"item_id": ["a", "b", "c"], "genre": [[1.0, float("nan")], [1.0], [2.0]]})
    with pytest.raises(RecframeError, match="null or NaN group inside a list"):
        recframe.item_groups(GROUP_RECS, k=2, items=items, item_group="genre")


def test_n_items_is_a_whole_count_and_a_weighted_one_only_for_label_lists() -> None:
    plain = pl.DataFrame({"item_id": ["a", "b", "c"], "genre": ["pop", "pop", "jazz"]})
    out = recframe.item_groups(GROUP_RECS, k=2, items=plain, item_group="genre")
    assert out.schema["n_items"] == pl.Int64 and out["n_items"].to_list() == [1, 2]
    assert "171.000" not in recframe.report(out.with_columns(pl.lit(171).alias("n_items")), format="markdown")
    popularity = recframe.item_groups(GROUP_RECS, k=2, train=GROUP_RECS.select("user_id", "item_id"), item_group="popularity")
    assert popularity.schema["n_items"] == pl.Int64
    lists = pl.DataFrame({"item_id": ["a", "b", "c"], "genre": [["x", "y"], ["x"], ["y"]]})
    weighted = recframe.item_groups(GROUP_RECS, k=2, items=lists, item_group="genre")
    assert weighted.schema["n_items"] == pl.Float64 and weighted["n_items"].to_list() == [1 / 2 + 1, 1 / 2 + 1]
