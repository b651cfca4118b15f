"""recframe.inspect and recframe.side_by_side: the lists of a few users, checked against per_user."""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest

import recframe
from conftest import to_polars
from recframe.cli import main

K = 3
USERS = list(range(1, 13))


def _data() -> dict[str, pl.DataFrame]:
    """Two models scoring 6 candidates per user (with tied scores), ratings, a history and a
    catalog whose titles need escaping."""
    rng = np.random.default_rng(7)
    items = [f"i{j:02d}" for j in range(15)]
    rows = []
    for user in USERS:
        for model in ("A", "B"):
            for item in rng.choice(items, 6, replace=False):
                rows.append((model, user, str(item), float(rng.integers(0, 4))))  # few values: ties
    recs = pl.DataFrame(rows, schema=["model", "user_id", "item_id", "score"], orient="row")
    truth = pl.DataFrame(
        [(u, str(i), int(rng.integers(1, 6))) for u in USERS if u != 12 for i in rng.choice(items, 4, replace=False)],
        schema=["user_id", "item_id", "rating"],
        orient="row",
    )
    train = pl.DataFrame(
        [(u, str(i), int(rng.integers(1, 6))) for u in USERS for i in rng.choice(items, 2, replace=False)],
        schema=["user_id", "item_id", "rating"],
        orient="row",
    )
    catalog = pl.DataFrame(
        {
            "item_id": items,
            "title": ["<script>alert(1)</script>" if j == 0 else f"Film {j}" for j in range(15)],
            "poster": [f"https://img.example/{j}.jpg" for j in range(15)],
        }
    )
    users = pl.DataFrame({"user_id": USERS, "segment": ["odd" if u % 2 else "even" for u in USERS]})
    return {"recs": recs, "truth": truth, "train": train, "items": catalog, "users": users}


DATA = _data()
OPTIONS = {"score": "score", "relevance": "rating", "threshold": 4, "by": "model", "empty_users": "zero"}


def _frames(constructor):
    return {name: constructor(frame) for name, frame in DATA.items()}


def _expected_top_k(exclude: pl.DataFrame | None = None) -> pl.DataFrame:
    """Each model's top K by hand: score descending, ties by item ascending, seen items out."""
    recs = DATA["recs"]
    if exclude is not None:
        recs = recs.join(exclude.select("user_id", "item_id"), on=["user_id", "item_id"], how="anti")
    return (
        recs.sort(["model", "user_id", "score", "item_id"], descending=[False, False, True, False])
        .with_columns(rank=pl.int_range(1, pl.len() + 1).over("model", "user_id").cast(pl.Int64))
        .filter(pl.col("rank") <= K)
        .select("model", "user_id", "rank", "item_id")
    )


def test_recommended_rows_are_the_top_k_with_the_hits_per_user_counts(constructor):
    f = _frames(constructor)
    given = [3, 1, 12, 8]
    out = to_polars(
        recframe.inspect(
            f["recs"], k=K, users=given, truth=f["truth"], exclude=f["train"], train=f["train"], items=f["items"], **OPTIONS
        )
    )
    assert out.columns == ["model", "user_id", "source", "rank", "item_id", "relevant", "relevance", "title", "poster"]
    assert out["user_id"].unique(maintain_order=True).to_list() == given  # in the order given
    recommended = out.filter(pl.col("source") == "recommended")
    expected = _expected_top_k(DATA["train"]).filter(pl.col("user_id").is_in(given))
    got = recommended.select("model", "user_id", "rank", "item_id").sort("model", "user_id", "rank")
    assert got.to_dicts() == expected.sort("model", "user_id", "rank").to_dicts()
    # the hits are the ones per_user counts: precision@K * K
    per_user = to_polars(
        recframe.per_user(f["recs"], k=K, metrics=["precision"], truth=f["truth"], exclude=f["train"], **OPTIONS)
    ).filter(pl.col("user_id").is_in(given))
    hits = recommended.group_by("model", "user_id").agg(pl.col("relevant").fill_null(False).sum().alias("hits"))
    joined = per_user.join(hits, on=["model", "user_id"], how="left").with_columns(pl.col("hits").fill_null(0))
    assert (joined["precision@3"] * K).round(9).to_list() == joined["hits"].cast(pl.Float64).to_list()
    # history: the training items, by rating; held out: the truth after exclude=, by rating
    history = out.filter(pl.col("source") == "history")
    assert history["model"].null_count() == history.height
    assert sorted(history.filter(pl.col("user_id") == 3)["item_id"]) == sorted(
        DATA["train"].filter(pl.col("user_id") == 3)["item_id"]
    )
    held = out.filter(pl.col("source") == "held_out", pl.col("user_id") == 1)
    truth = DATA["truth"].join(DATA["train"], on=["user_id", "item_id"], how="anti").filter(pl.col("user_id") == 1)
    assert held["item_id"].to_list() == truth.sort(["rating", "item_id"], descending=[True, False])["item_id"].to_list()
    assert held["relevant"].to_list() == (truth.sort(["rating", "item_id"], descending=[True, False])["rating"] >= 4).to_list()
    assert held["rank"].to_list() == list(range(1, held.height + 1))
    assert out.filter(pl.col("source") == "held_out", pl.col("user_id") == 12).height == 0  # no truth


def test_random_is_seeded_and_the_same_on_every_backend(constructor):
    f = _frames(constructor)

    def chosen(seed):
        out = recframe.inspect(f["recs"], k=K, select="random", n=4, seed=seed, truth=f["truth"], **OPTIONS)
        return to_polars(out)["user_id"].unique(maintain_order=True).to_list()

    first = chosen(0)
    assert len(first) == 4 and set(first) <= set(USERS)
    assert chosen(0) == first
    reference = recframe.inspect(DATA["recs"], k=K, select="random", n=4, seed=0, truth=DATA["truth"], **OPTIONS)
    assert reference["user_id"].unique(maintain_order=True).to_list() == first
    assert any(chosen(seed) != first for seed in (1, 2))


def _per_user_ndcg() -> pl.DataFrame:
    return recframe.per_user(DATA["recs"], k=K, metrics=["ndcg"], truth=DATA["truth"], **OPTIONS)


@pytest.mark.parametrize("select", ["worst", "best", "disagree"])
def test_worst_best_and_disagree_agree_with_sorting_per_user(constructor, select):
    f = _frames(constructor)
    out = to_polars(recframe.inspect(f["recs"], k=K, select=select, n=3, truth=f["truth"], **OPTIONS))
    chosen = out["user_id"].unique(maintain_order=True).to_list()
    assert len(chosen) == 3
    per_user = _per_user_ndcg()
    if select == "disagree":
        value = per_user.group_by("user_id").agg((pl.col("ndcg@3").max() - pl.col("ndcg@3").min()).alias("v"))
    else:
        value = per_user.group_by("user_id").agg(pl.col("ndcg@3").mean().alias("v"))
    value = value.with_columns(pl.col("v").round(9))
    of = dict(value.iter_rows())
    others = [of[u] for u in of if u not in chosen]
    picked = [of[u] for u in chosen]
    if select == "worst":
        assert max(picked) <= min(others) and picked == sorted(picked)
    else:
        assert min(picked) >= max(others) and picked == sorted(picked, reverse=True)
    assert out.filter(pl.col("source") == "recommended")["model"].unique().sort().to_list() == ["A", "B"]


def test_worst_per_segment_and_a_named_metric():
    d = DATA
    out = recframe.inspect(
        d["recs"], k=K, select="worst", n=2, metric="recall@2", truth=d["truth"], users=d["users"],
        **{**OPTIONS, "by": ["model", "segment"]},
    )  # fmt: skip
    assert out.columns[:3] == ["model", "segment", "user_id"]
    per_segment = out.group_by("segment").agg(pl.col("user_id").n_unique())
    assert dict(per_segment.iter_rows()) == {"even": 2, "odd": 2}
    assert out.filter(pl.col("source") == "held_out")["segment"].null_count() == 0  # the attribute on every row
    per_user = recframe.per_user(d["recs"], k=2, metrics=["recall"], truth=d["truth"], **OPTIONS)
    mean = dict(per_user.group_by("user_id").agg(pl.col("recall@2").mean()).iter_rows())
    for segment, part in out.group_by("segment"):
        members = d["users"].filter(pl.col("segment") == segment[0])["user_id"].to_list()
        picked = part["user_id"].unique().to_list()
        assert max(mean[u] for u in picked) <= min(mean[u] for u in members if u not in picked)


def test_users_frames_of_ids_and_of_attributes():
    d = DATA
    few = d["users"].filter(pl.col("user_id").is_in([2, 5]))
    given = recframe.inspect(d["recs"], k=K, users=few.select("user_id"), truth=d["truth"], **OPTIONS)
    assert given["user_id"].unique(maintain_order=True).to_list() == [2, 5]  # ids alone: given
    drawn = recframe.inspect(d["recs"], k=K, users=d["users"], n=3, truth=d["truth"], **OPTIONS)
    assert drawn["user_id"].n_unique() == 3  # with attributes: the universe, drawn from
    every = recframe.inspect(d["recs"], k=K, users=few, select="given", truth=d["truth"], **OPTIONS)
    assert every["user_id"].unique().sort().to_list() == [2, 5]
    per_segment = recframe.inspect(
        d["recs"], k=K, users=d["users"], n=1, truth=d["truth"], **{**OPTIONS, "by": ["model", "segment"]}
    )
    assert sorted(per_segment["segment"].unique().to_list()) == ["even", "odd"]
    assert per_segment["user_id"].n_unique() == 2


def test_given_users_filter_reaches_the_parquet_scan(tmp_path):
    path = tmp_path / "recs.parquet"
    DATA["recs"].write_parquet(path)
    out = recframe.inspect(pl.scan_parquet(path), k=K, users=[3, 4], truth=DATA["truth"].lazy(), **OPTIONS)
    assert isinstance(out, pl.LazyFrame)  # lazy in, lazy out
    plan = out.explain().splitlines()
    scans = [i for i, line in enumerate(plan) if "Parquet SCAN" in line]
    assert scans
    for i in scans:  # every read of the file is filtered by the users as it is read
        following = "\n".join(plan[i : i + 4])
        assert re.search(r'SELECTION: col\("user_id"\)\.is_in\(\[\[3, 4\]\]\)', following), following
    assert out.collect()["user_id"].unique().sort().to_list() == [3, 4]


def test_namespace_and_pandas_in_pandas_out():
    pd_recs, pd_truth = DATA["recs"].to_pandas(), DATA["truth"].to_pandas()
    out = pd_recs.recmetrics.inspect(k=K, users=[1], truth=pd_truth, **OPTIONS)
    assert type(out).__name__ == "DataFrame" and type(out).__module__.startswith("pandas")
    direct = recframe.inspect(DATA["recs"], k=K, users=[1], truth=DATA["truth"], **OPTIONS)
    assert pl.from_pandas(out).to_dicts() == direct.to_dicts()


def test_side_by_side_html():
    d = DATA
    out = recframe.inspect(d["recs"], k=K, users=[3, 1], truth=d["truth"], train=d["train"], items=d["items"], **OPTIONS)
    html = recframe.side_by_side(out).to_html()
    assert html == recframe.side_by_side(out)._repr_html_()
    assert html.count('class="rf-user"') == 2 and html.index(">user_id 3<") < html.index(">user_id 1<")
    # each model's items in rank order, within the user's block
    block = html[html.index(">user_id 3<") : html.index(">user_id 1<")]
    for model in ("A", "B"):
        items = out.filter(pl.col("user_id") == 3, pl.col("model") == model, pl.col("source") == "recommended")["item_id"]
        column = block[block.index(f"<h4>{model} ") :]
        column = column[: column.index("</ol>")]
        positions = [column.index(f'<span class="rf-item">{item}</span>') for item in items]
        assert positions == sorted(positions)
    hits = out.filter(pl.col("relevant").fill_null(False)).height
    assert html.count('class="rf-hit"') == hits and html.count("✓") == hits + 1  # (+ the legend)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img" not in html and not re.search(r"https?://", html)
    with_images = recframe.side_by_side(out, image="poster", max_users=1).to_html()
    assert with_images.count('class="rf-user"') == 1
    assert '<img class="rf-img" src="https://img.example/' in with_images
    page = recframe.side_by_side(out).to_page()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page


def test_cli_inspect_prints_the_frame_and_writes_the_page(tmp_path, capsys):
    d = DATA
    paths = {}
    for name in ("recs", "truth", "train", "items"):
        paths[name] = tmp_path / f"{name}.parquet"
        d[name].write_parquet(paths[name])
    args = [
        "inspect", str(paths["recs"]), "--truth", str(paths["truth"]), "--train", str(paths["train"]),
        "--items", str(paths["items"]), "--score", "score", "--relevance", "rating", "--threshold", "4",
        "--by", "model", "--k", str(K), "--quiet",
    ]  # fmt: skip
    assert main([*args, "--users", "3,1"]) == 0
    printed = capsys.readouterr().out
    assert "recommended" in printed and "held_out" in printed
    out_csv = tmp_path / "inspect.csv"
    assert main([*args, "--select", "worst", "--n", "2", "--out", str(out_csv)]) == 0
    assert capsys.readouterr().err.startswith("recframe: note: 5 users tie at ndcg@3 = 0; 2 of them shown, chosen with seed 0.")
    table = pl.read_csv(out_csv)
    expected = recframe.inspect(
        d["recs"], k=K, select="worst", n=2, truth=d["truth"], train=d["train"], items=d["items"],
        **{k: v for k, v in OPTIONS.items() if k != "empty_users"},
    )  # fmt: skip
    assert table["user_id"].unique(maintain_order=True).to_list() == expected["user_id"].unique(maintain_order=True).to_list()
    page = tmp_path / "inspect.html"
    assert main([*args, "--users", "3", "--image", "poster", "--out", str(page)]) == 0
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "rf-user" in text and "<img" in text
    assert main([*args, "--select", "nope"]) == 2
    assert main([*args, "--users", "999"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("recframe: error:") for line in err)
    assert "999" in err[1]


@pytest.mark.parametrize(
    ("kwargs", "fragments"),
    [
        ({"select": "wrost"}, ["select='wrost'", "worst"]),
        ({"n": 0}, ["n=0"]),
        ({"k": [5, 10]}, ["k=[5, 10]", "one whole number"]),
        ({"select": "given"}, ['select="given"', "users="]),
        ({"users": [1, 999, 998]}, ["999", "998", "2 of the 3"]),
        ({"users": ["1"]}, ["'1'", "user_id", "users=[1]"]),
        ({"users": ["a"]}, ["'a'", "user_id", "users=[1, 2, 3]"]),
        ({"select": "worst", "metric": "ndgc@3"}, ["metric='ndgc@3'", 'metric="ndcg@3"']),
        ({"select": "worst", "metric": "catalog_coverage@3"}, ["metric='catalog_coverage@3'", "per user"]),
        ({"select": "worst", "metric": "r_precision@3", "profile": "trec_eval"}, ["r_precision@3", "r_precision"]),
        ({"select": "disagree", "by": None}, ["disagree", "model key"]),
        ({"users": [1], "show_images": "poster"}, ["show_images='poster'", "items="]),
        ({"users": [1], "items": DATA["items"], "show_images": "cover"}, ["show_images='cover'", "poster"]),
        ({"users": [1], "user": None}, ["user=None"]),
        ({"users": [1], "treshold": 4}, ["treshold", "threshold"]),
    ],
)
def test_refusals_name_the_argument_and_give_a_hint(kwargs, fragments):
    options = {**OPTIONS, "truth": DATA["truth"]}
    options.update(kwargs)
    if options.get("by") is None:
        options.pop("by")
    with pytest.raises(recframe.RecframeError) as caught:
        recframe.inspect(DATA["recs"], **options)
    message = str(caught.value)
    assert "Hint:" in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_side_by_side_refusals():
    out = recframe.inspect(DATA["recs"], k=K, users=[1], truth=DATA["truth"], items=DATA["items"], **OPTIONS)
    with pytest.raises(recframe.RecframeError, match=r"image='cover'.*Hint"):
        recframe.side_by_side(out, image="cover")
    with pytest.raises(recframe.RecframeError, match=r"max_users=0"):
        recframe.side_by_side(out, max_users=0)
    with pytest.raises(recframe.RecframeError, match=r"inspected=.*not a frame from recframe.inspect"):
        recframe.side_by_side(DATA["recs"])


@pytest.mark.slow_engine  # Ibis is in the test-slow extra
def test_the_same_rows_inside_ibis():
    """The plan compiles to SQL too (Ibis on DuckDB; Spark and SQLFrame run the same code, at
    seconds per call, and gave the same rows when this was written)."""
    ibis = pytest.importorskip("ibis", reason="Ibis is not installed: pip install 'recframe[ibis]'")
    pytest.importorskip("duckdb")
    f = {name: ibis.memtable(frame.to_arrow()) for name, frame in DATA.items()}
    kwargs = {"k": K, "users": [3, 1], **OPTIONS}
    got = to_polars(
        recframe.inspect(f["recs"], truth=f["truth"], train=f["train"], exclude=f["train"], items=f["items"], **kwargs)
    )
    expected = recframe.inspect(
        DATA["recs"], truth=DATA["truth"], train=DATA["train"], exclude=DATA["train"], items=DATA["items"], **kwargs
    )
    assert got.to_dicts() == expected.to_dicts()


def _overlap_by_hand() -> dict[int, float]:
    """Per user, the mean over pairs of models of |top K of A & top K of B| / K (two models)."""
    top = _expected_top_k()
    out = {}
    for user in USERS:
        a = set(top.filter((pl.col("model") == "A") & (pl.col("user_id") == user))["item_id"])
        b = set(top.filter((pl.col("model") == "B") & (pl.col("user_id") == user))["item_id"])
        out[user] = len(a & b) / K
    return out


def test_overlap_picks_the_users_whose_models_share_least(constructor):
    f = _frames(constructor)
    out = to_polars(recframe.inspect(f["recs"], k=K, select="overlap", n=4, truth=f["truth"], **OPTIONS))
    chosen = out["user_id"].unique(maintain_order=True).to_list()
    of = _overlap_by_hand()
    picked = [of[u] for u in chosen]
    assert len(chosen) == 4 and picked == sorted(picked)
    assert max(picked) <= min(of[u] for u in of if u not in chosen)


def test_overlap_counts_each_pair_of_three_models():
    # user 1: A and B share x and y, C shares nothing: (2 + 0 + 0) / 3 pairs / k=2 = 1/3
    # user 2: all three lists are the same: 1
    recs = pl.DataFrame({
        "model": ["A", "A", "B", "B", "C", "C"] * 2,
        "user_id": [1] * 6 + [2] * 6,
        "item_id": ["x", "y", "y", "x", "u", "v"] + ["x", "y"] * 3,
        "rank": [1, 2] * 6,
        "relevance": [1] * 12,
    })  # fmt: skip
    out = recframe.inspect(recs, k=2, select="overlap", n=1, by="model")
    assert out["user_id"].unique().to_list() == [1]
    with pytest.raises(recframe.RecframeError, match="overlap.*model key"):
        recframe.inspect(recs.filter(pl.col("model") == "A"), k=2, select="overlap", by=None)


def test_a_defect_in_a_list_shown_is_refused_as_per_user_refuses_it():
    recs = DATA["recs"]
    twice = pl.concat([recs, recs.filter((pl.col("user_id") == 1) & (pl.col("model") == "A")).head(1)])
    with pytest.raises(recframe.RecframeError, match="duplicate"):
        recframe.inspect(twice, k=K, users=[1], truth=DATA["truth"], **OPTIONS)
    shown = recframe.inspect(twice, k=K, users=[2], truth=DATA["truth"], **OPTIONS)  # only user 2's rows are read
    assert shown["user_id"].unique().to_list() == [2]


# ---------------------------------------------------------------------------- users that explain themselves
# Five users, two models, k=2, one relevant item "r" each (rating >= 4). nDCG@2 by hand:
#   users 1, 2, 3: neither model ranks r: A 0, B 0 (mean 0, gap 0): three users tie at 0
#   user 4: A ranks r 2nd, 1 / log2(3) = 0.6309; B misses it: mean 0.3155, gap 0.6309
#   user 5: A ranks r 1st, 1; B 2nd, 0.6309: mean 0.8155, gap 0.3691
SECOND = 1 / np.log2(3)
HAND_OPTIONS = {"relevance": "rating", "threshold": 4, "by": "model"}


def _hand() -> tuple[pl.DataFrame, pl.DataFrame]:
    hits = {(4, "A"): 2, (5, "A"): 1, (5, "B"): 2}  # (user, model): the rank of r
    rows = []
    for user in range(1, 6):
        for model in ("A", "B"):
            at = hits.get((user, model))
            rows += [(model, user, "r" if at == rank else f"x{rank}", rank) for rank in (1, 2)]
    recs = pl.DataFrame(rows, schema=["model", "user_id", "item_id", "rank"], orient="row")
    truth = pl.DataFrame({"user_id": [1, 2, 3, 4, 5], "item_id": ["r"] * 5, "rating": [5, 4, 5, 4, 5]})
    return recs, truth


def _by_user(out: pl.DataFrame) -> dict[int, tuple[float, int]]:
    """Per user: (its ndcg@2_mean or _gap, tied_users), read off every row of the user."""
    column = out.columns[8]
    per = out.group_by("user_id", maintain_order=True).agg(pl.col(column).unique(), pl.col("tied_users").unique())
    assert all(len(v) == 1 for v in per[column]) and all(len(t) == 1 for t in per["tied_users"])  # one value a user
    return {u: (round(v[0], 4), t[0]) for u, v, t in per.iter_rows()}


def test_worst_users_carry_the_metric_per_model_and_their_tie(constructor):
    recs, truth = _hand()
    out = to_polars(recframe.inspect(constructor(recs), k=2, select="worst", n=2, truth=constructor(truth), **HAND_OPTIONS))
    assert out.columns == [
        "model", "user_id", "source", "rank", "item_id", "relevant", "relevance", "ndcg@2", "ndcg@2_mean", "tied_users",
    ]  # fmt: skip
    chosen = out["user_id"].unique(maintain_order=True).to_list()
    assert len(chosen) == 2 and set(chosen) <= {1, 2, 3}
    assert _by_user(out) == {u: (0.0, 3) for u in chosen}  # 3 users share the mean 0
    recommended = out.filter(pl.col("source") == "recommended")
    assert recommended["ndcg@2"].to_list() == [0.0] * 8  # each model's list: 0
    assert out.filter(pl.col("source") != "recommended")["ndcg@2"].null_count() == 2  # held out: no model's value
    assert recframe.reporting._inspect.frame_ties(out, "user_id", ["model"], seed=0) == [
        "3 users tie at ndcg@2 = 0; 2 of them shown, chosen with seed 0."
    ]
    # the users past the tie: all three shown, no tie left to disclose; user 4 tied with nobody
    four = to_polars(recframe.inspect(constructor(recs), k=2, select="worst", n=4, truth=constructor(truth), **HAND_OPTIONS))
    assert _by_user(four) == {1: (0.0, 3), 2: (0.0, 3), 3: (0.0, 3), 4: (0.3155, 1)}
    assert four["user_id"].unique(maintain_order=True).to_list()[-1] == 4
    assert recframe.reporting._inspect.frame_ties(four, "user_id", ["model"]) == []
    by_model = (
        four.filter(pl.col("user_id") == 4, pl.col("rank") == 1, pl.col("source") == "recommended")
        .select("model", "ndcg@2")
        .rows()
    )
    assert [(m, round(v, 4)) for m, v in by_model] == [("A", round(SECOND, 4)), ("B", 0.0)]


def test_best_and_disagree_carry_the_values_and_the_gap(constructor):
    recs, truth = _hand()
    best = to_polars(recframe.inspect(constructor(recs), k=2, select="best", n=1, truth=constructor(truth), **HAND_OPTIONS))
    assert best.columns[7:] == ["ndcg@2", "ndcg@2_mean", "tied_users"]
    assert _by_user(best) == {5: (round((1 + SECOND) / 2, 4), 1)}
    lists = best.filter(pl.col("source") == "recommended").group_by("model", maintain_order=True).agg(pl.col("ndcg@2").first())
    assert [(m, round(v, 4)) for m, v in lists.rows()] == [("A", 1.0), ("B", round(SECOND, 4))]
    disagree = to_polars(
        recframe.inspect(constructor(recs), k=2, select="disagree", n=3, truth=constructor(truth), **HAND_OPTIONS)
    )
    assert disagree.columns[7:] == ["ndcg@2", "ndcg@2_gap", "tied_users"]
    users = disagree["user_id"].unique(maintain_order=True).to_list()
    assert users[:2] == [4, 5] and users[2] in {1, 2, 3}
    assert _by_user(disagree) == {4: (round(SECOND, 4), 1), 5: (round(1 - SECOND, 4), 1), users[2]: (0.0, 3)}
    assert recframe.reporting._inspect.frame_ties(disagree, "user_id", ["model"], seed=0) == [
        "3 users tie at the gap in ndcg@2 = 0; 1 of them shown, chosen with seed 0."
    ]


def test_given_random_and_overlap_add_no_metric_columns():
    recs, truth = _hand()
    for select in ("given", "random", "overlap"):
        out = recframe.inspect(recs, k=2, select=select, users=[1, 2] if select == "given" else None, truth=truth, **HAND_OPTIONS)
        assert out.columns[-1] == "relevance", select


def test_ties_per_segment_are_counted_within_the_segment():
    recs, truth = _hand()
    users = pl.DataFrame({"user_id": [1, 2, 3, 4, 5], "segment": ["a", "a", "b", "b", "b"]})
    out = recframe.inspect(
        recs, k=2, select="worst", n=1, truth=truth, users=users, **{**HAND_OPTIONS, "by": ["model", "segment"]}
    )
    assert out.columns[:2] == ["model", "segment"] and out.columns[8:11] == ["ndcg@2", "ndcg@2_mean", "tied_users"]
    tied = dict(out.group_by("segment").agg(pl.col("tied_users").first()).iter_rows())
    assert tied == {"a": 2, "b": 1}  # users 1 and 2 tie in segment a; user 3 is alone at 0 in b
    assert recframe.reporting._inspect.frame_ties(out, "user_id", ["model", "segment"], seed=0) == [
        "segment a: 2 users tie at ndcg@2 = 0; 1 of them shown, chosen with seed 0."
    ]
    html = recframe.side_by_side(out).to_html()
    assert (
        '<p class="rf-ties">segment a: 2 users tie at ndcg@2 = 0; 1 of them shown, chosen in a seeded random order.</p>' in html
    )


def test_side_by_side_heads_each_list_with_its_value_and_says_the_tie():
    recs, truth = _hand()
    items = pl.DataFrame({"item_id": ["r", "x1", "x2"], "title": ["Right", "Other 1", "Other 2"]})
    out = recframe.inspect(recs, k=2, select="worst", n=2, truth=truth, items=items, **HAND_OPTIONS)
    assert out.columns[7:] == ["ndcg@2", "ndcg@2_mean", "tied_users", "title"]  # items= after the metric's columns
    view = recframe.side_by_side(out)
    assert view.item_columns == ("title",)
    html = view.to_html()
    tie = "3 users tie at ndcg@2 = 0; 2 of them shown, chosen in a seeded random order."
    assert html.count('<p class="rf-ties">') == 1 and f'<p class="rf-ties">{tie}</p>' in html
    assert view.ties == [tie]
    assert html.count('<span class="rf-value">ndcg@2 0.000</span>') == 4  # two users, two models
    assert html.count("mean ndcg@2 0 (tied with 2 other users)</span>") == 2
    assert "Other 1" in html and "tied_users" not in html  # the metric's columns are not item text
    # one user shown of the frame's two: one of the three tied users
    assert recframe.side_by_side(out, max_users=1).ties == [tie.replace("2 of them", "1 of them")]
    best = recframe.inspect(recs, k=2, select="best", n=1, truth=truth, **HAND_OPTIONS)
    html = recframe.side_by_side(best).to_html()
    assert "rf-ties" not in html.replace(".rf-inspect .rf-ties", "")  # user 5 ties with nobody
    assert '<h4>A <span class="rf-count">(1 relevant of 2)</span><span class="rf-value">ndcg@2 1.000</span></h4>' in html
    assert '<h4>B <span class="rf-count">(1 relevant of 2)</span><span class="rf-value">ndcg@2 0.631</span></h4>' in html
    assert "mean ndcg@2 0.815</span>" in html and "tied with" not in html
    # relevance beside the ✓, and a long list ends with "… N more"
    # (the grade after the item, worded: "3 937" before read, and copied, as one number)
    assert re.search(
        r'<span class="rf-mark" aria-label="relevant">✓</span><span class="rf-item">[^<]+</span> <span class="rf-grade">rel 5</span>',
        html,
    )
    short = recframe.side_by_side(best, max_items=1).to_html()
    assert '<li class="rf-more">… 1 more (1 relevant)</li>' in short  # B's r, ranked 2nd


def test_cli_prints_the_tie_and_the_values(tmp_path, capsys):
    recs, truth = _hand()
    recs.write_parquet(tmp_path / "recs.parquet")
    truth.write_parquet(tmp_path / "truth.parquet")
    args = [
        "inspect", str(tmp_path / "recs.parquet"), "--truth", str(tmp_path / "truth.parquet"), "--relevance", "rating",
        "--threshold", "4", "--by", "model", "--k", "2", "--quiet", "--select", "worst", "--n", "2",
    ]  # fmt: skip
    assert main([*args, "--out", str(tmp_path / "worst.csv")]) == 0
    assert capsys.readouterr().err == "recframe: note: 3 users tie at ndcg@2 = 0; 2 of them shown, chosen with seed 0.\n"
    table = pl.read_csv(tmp_path / "worst.csv")
    assert table.columns[7:] == ["ndcg@2", "ndcg@2_mean", "tied_users"] and set(table["tied_users"]) == {3}
    assert main([*args, "--seed", "3", "--out", str(tmp_path / "worst.html")]) == 0
    assert "chosen with seed 3." in capsys.readouterr().err
    page = (tmp_path / "worst.html").read_text()
    assert '<p class="rf-ties">3 users tie at ndcg@2 = 0; 2 of them shown' in page and "ndcg@2 0.000" in page
    assert main([*args[:-4], "--select", "best", "--n", "1", "--format", "csv"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""  # user 5 ties with nobody
    assert "ndcg@2_mean" in captured.out.splitlines()[0] and ",0.8154" in captured.out


def test_side_by_side_shows_a_user_whose_id_is_nan():
    """side_by_side splits its table by user once: a float NaN id, which no dict key equals,
    still finds its rows (found, as Polars' filter finds NaN equal to NaN)."""
    recs = pl.DataFrame({"user_id": [1.0, 1.0], "item_id": ["x", "y"], "rank": [1, 2]})
    truth = pl.DataFrame({"user_id": [1.0], "item_id": ["y"], "rating": [5]})
    out = recframe.inspect(recs, users=[1.0], truth=truth, relevance="rating")
    shown = recframe.side_by_side(out.with_columns(pl.lit(float("nan")).alias("user_id"))).to_html()
    assert "user_id nan" in shown and shown.count("<li") == recframe.side_by_side(out).to_html().count("<li") == 3


def _many_users() -> tuple[pl.DataFrame, dict[int, tuple[float, int]]]:
    """600 users, one list each: group v (v = 1..34) holds v users whose top item has grade v
    and whose best item (grade 34) was not recommended, so ndcg@1 = v / 34; group 0, 5 users
    with a top item of grade 0. Per user: (ndcg@1, the users of their group)."""
    rows, want = [], {}
    user = 0
    for v, size in [(0, 5), *((v, v) for v in range(1, 35))]:
        for _ in range(size):
            rows += [(user, "top", 1, v), (user, "best", None, 34)]
            want[user] = (v / 34, size)
            user += 1
    return pl.DataFrame(rows, schema=["user_id", "item_id", "rank", "relevance"], orient="row"), want


def test_600_users_are_ordered_and_counted_without_a_chain_on_every_backend(constructor_or_ibis):
    """Issue 58, item 10: inspect of 600 users raised RecursionError (the order they were
    chosen in, and their tie counts, were chains of one condition per user or count). The
    users come out in the order given, and "worst" of all 600 in the order of their values,
    each with the size of its group of ties."""
    import time

    df, want = _many_users()
    assert len(want) == 600
    given = [int(u) for u in np.random.default_rng(3).permutation(600)]
    start = time.perf_counter()
    out = to_polars(recframe.inspect(constructor_or_ibis(df), k=1, users=given))
    assert out["user_id"].unique(maintain_order=True).to_list() == given
    worst = to_polars(recframe.inspect(constructor_or_ibis(df), k=1, select="worst", n=600))
    assert time.perf_counter() - start < 60
    order = worst["user_id"].unique(maintain_order=True).to_list()
    assert sorted(order) == list(range(600))
    assert [want[u][0] for u in order] == sorted(want[u][0] for u in order)  # lowest ndcg@1 first
    got = worst.group_by("user_id").agg(pl.col("ndcg@1_mean").first(), pl.col("tied_users").first())
    assert {u: (pytest.approx(value, abs=1e-12), tied) for u, value, tied in got.iter_rows()} == want
