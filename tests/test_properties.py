"""Random frames: recframe agrees with the slow reference in tests/reference.py on every backend.

The frames have nulls (unrecommended relevant items, unknown relevance), ties in score, gaps in
ranks, users without relevant items, users without recommendations, k beyond the list, and
several `by` groups.
"""

from __future__ import annotations

import math
from typing import Any

import narwhals as nw
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import recframe
import reference
from conftest import BACKENDS, to_polars
from recframe.engine import _frames

# 24 random frames a property on the main backend: every run draws new ones, so the frames
# checked over the runs keep growing, while the README's command stays under four minutes
SETTINGS = settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def long_frames(draw: st.DrawFn, *, with_score: bool) -> tuple[pl.DataFrame, dict[str, Any]]:
    """A long frame (model, fold, user_id, item_id, rank or score, relevance) and the options to
    use. The options may hold ``users`` (a users= frame with a ``segment`` per user, maybe not
    listing every user) and ``exclude`` (seen (user, item) pairs, maybe per fold) as Polars
    frames: :func:`call_options` converts them to the backend under test."""
    string_ids = draw(st.booleans())
    rows = []
    for model in draw(st.sampled_from([["A"], ["A", "B"]])):
        for user in range(draw(st.integers(0, 5))):
            n_items = draw(st.integers(0, 8))
            items = draw(st.lists(st.integers(0, 11), min_size=n_items, max_size=n_items, unique=True))
            positions = draw(st.lists(st.integers(1, 15), min_size=n_items, max_size=n_items, unique=True))
            for item, position in zip(items, positions):
                rel = draw(st.one_of(st.none(), st.sampled_from([0.0, 1.0, 2.0, 3.0, 4.5])))
                if with_score:
                    order = draw(st.one_of(st.none(), st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0])))  # ties
                else:
                    order = draw(st.one_of(st.none(), st.just(position)))
                rows.append(
                    {
                        "model": model,
                        "fold": 1,
                        "user_id": f"u{user}" if string_ids else user,
                        "item_id": f"i{item:02d}" if string_ids else item,
                        "order": order,
                        "relevance": rel,
                    }
                )
    id_type = pl.String if string_ids else pl.Int64
    order_col = "score" if with_score else "rank"
    df = pl.DataFrame(
        rows,
        schema={
            "model": pl.String,
            "fold": pl.Int64,
            "user_id": id_type,
            "item_id": id_type,
            "order": pl.Float64 if with_score else pl.Int64,
            "relevance": pl.Float64,
        },
    ).rename({"order": order_col})
    if df.height and draw(st.booleans()):
        # a second fold: a copy of some lists with other relevance (a truth key with truth=)
        copy = df.filter(pl.col("user_id").hash(draw(st.integers(0, 3))) % 2 == 0)
        df = pl.concat([df, copy.with_columns(fold=pl.lit(2, pl.Int64), relevance=pl.col("relevance").reverse().over("user_id"))])

    def ident(i: int) -> Any:
        return f"u{i}" if string_ids else i

    options: dict[str, Any] = {
        "k": draw(st.lists(st.sampled_from([1, 2, 3, 5, 10, 20]), min_size=1, max_size=3, unique=True)),
        "threshold": draw(st.sampled_from([None, 1.0, 2.0, 3.0])),
        "by": draw(
            st.sampled_from([None, "model", ["model", "fold"], ["model", "segment"], ["segment"], ["fold", "model", "segment"]])
        ),
        "precision_denominator": draw(st.sampled_from(["k", "retrieved"])),
        "recall_denominator": draw(st.sampled_from(["relevant", "min_k_relevant"])),
        "ap_denominator": draw(st.sampled_from(["min_k_relevant", "relevant", "hits", "k"])),
        "gain": draw(st.sampled_from(["linear", "binary", "exp2"])),
        "empty_users": draw(st.sampled_from(["skip", "zero"])),
    }
    by = by_keys(options)
    if "segment" in by or draw(st.booleans()):
        # users= with a segment each; some users may be left out (dropped) and some extra listed
        listed = draw(st.lists(st.integers(0, 6), unique=True, min_size=1 if "segment" in by else 0, max_size=7))
        options["users"] = pl.DataFrame(
            {"user_id": [ident(u) for u in listed], "segment": [f"s{u % 2}" for u in listed]},
            schema={"user_id": id_type, "segment": pl.String},
        )
        options["unlisted_users"] = "drop"
    if draw(st.booleans()):
        pairs = draw(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 11), st.sampled_from([1, 2])), max_size=12))
        exclude = pl.DataFrame(
            {
                "user_id": [ident(u) for u, _, _ in pairs],
                "item_id": [f"i{i:02d}" if string_ids else i for _, i, _ in pairs],
                "fold": [f for _, _, f in pairs],
            },
            schema={"user_id": id_type, "item_id": id_type, "fold": pl.Int64},
        )
        options["exclude"] = exclude if draw(st.booleans()) else exclude.drop("fold")
    if with_score:
        options["score"] = "score"
        options["score_threshold"] = draw(st.sampled_from([None, 1.0, 2.0]))
    else:
        options["rank_gaps"] = draw(st.sampled_from(["keep", "rerank"]))
    if "fold" not in by:
        df = df.filter(pl.col("fold") == 1)  # without it as a key, one list per (model, user)
    if "model" not in by and df["model"].n_unique() > 1:
        df = df.filter(pl.col("model") == "A")  # without `by`, one list per user
    return df, options


def by_keys(options: dict[str, Any]) -> list[str]:
    by = options.get("by")
    return [] if by is None else [by] if isinstance(by, str) else list(by)


def call_options(options: dict[str, Any], convert: Any) -> dict[str, Any]:
    """The options as recframe takes them: side frames converted with `convert`."""
    return {name: convert(value) if isinstance(value, pl.DataFrame) else value for name, value in options.items()}


def reference_per_user(df: pl.DataFrame, options: dict[str, Any], truth: pl.DataFrame | None = None) -> dict:
    sides = {name: options[name].to_dicts() for name in ("users", "exclude") if name in options}
    truth_keys = tuple(b for b in by_keys(options) if truth is not None and b in truth.columns)
    return reference.per_user(
        df.to_dicts(),
        k=options["k"],
        by=tuple(by_keys(options)),
        truth=None if truth is None else truth.to_dicts(),
        truth_keys=truth_keys,
        **sides,
        **{key: value for key, value in options.items() if key not in ("k", "by", "users", "exclude")},
    )


def assert_close(got: Any, want: Any, where: str) -> None:
    if want is None or got is None:
        assert got is None and want is None, f"{where}: got {got}, want {want}"
    else:
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12), f"{where}: got {got}, want {want}"


def check_against_reference(result: Any, summary: Any, want: dict, options: dict[str, Any]) -> None:
    by = by_keys(options)
    got = to_polars(result)
    assert got.height == len(want)
    for row in got.iter_rows(named=True):
        key = (*(row[b] for b in by), row["user_id"])
        for column, value in want[key].items():
            if not column.startswith("_"):  # list facts of the reference, not output columns
                assert_close(row[column], value, f"{key} {column}")
    want_summary = reference.summary(want, len(by), options["empty_users"])
    got_summary = to_polars(summary)
    assert got_summary.height == len(want_summary)
    for row in got_summary.iter_rows(named=True):
        expected = want_summary[tuple(row[b] for b in by)]
        for column, value in expected.items():
            assert_close(row[column], value, f"summary {column}")


@pytest.mark.parametrize("backend", list(BACKENDS))
@pytest.mark.parametrize("with_score", [False, True], ids=["rank", "score"])
def test_matches_reference(backend: str, with_score: bool) -> None:
    # DuckDB pays a SQL query per call and gets more random frames in test_engines (15 here); pandas and
    # Arrow inputs cross into Polars and run its plan, and a LazyFrame runs the eager frame's
    # plan without collecting it: fewer frames for them than for the eager Polars frame
    @settings(SETTINGS, max_examples=SETTINGS.max_examples if backend == "polars" else 12 if backend == "duckdb" else 20)
    @given(long_frames(with_score=with_score))
    def run(case: tuple[pl.DataFrame, dict[str, Any]]) -> None:
        df, options = case
        want = reference_per_user(df, options)
        frame, call = BACKENDS[backend](df), call_options(options, BACKENDS[backend])
        check_against_reference(recframe.per_user(frame, **call), recframe.summary(frame, **call), want, options)

    run()


@SETTINGS
@given(long_frames(with_score=True), st.data())
def test_truth_join_matches_reference(case: tuple[pl.DataFrame, dict[str, Any]], data: st.DataObject) -> None:
    """Recommendations + a separate truth frame give the reference's broadcast join."""
    df, options = case
    recs = df.drop("relevance")
    truth = draw_truth(data, df, options)
    want = reference_per_user(recs.with_columns(relevance=pl.lit(None)), options, truth=truth)
    check_against_reference(
        recframe.per_user(recs, truth=truth, **options), recframe.summary(recs, truth=truth, **options), want, options
    )


def draw_truth(data: st.DataObject, df: pl.DataFrame, options: dict[str, Any]) -> pl.DataFrame:
    """A truth frame for the users and items of `df`: with a fold column (a truth key) when
    `options` group by fold."""
    truth_rows = data.draw(
        st.lists(
            st.tuples(st.integers(0, 6), st.integers(0, 11), st.sampled_from([0.0, 1.0, 2.0, 4.0]), st.sampled_from([1, 2])),
            max_size=25,
            unique_by=lambda t: (t[0], t[1], t[3]),
        )
    )
    string_ids = df.schema["user_id"] == pl.String
    truth = pl.DataFrame(
        [
            {"fold": f, "user_id": f"u{u}" if string_ids else u, "item_id": f"i{i:02d}" if string_ids else i, "relevance": r}
            for u, i, r, f in truth_rows
        ],
        schema={"fold": pl.Int64, "user_id": df.schema["user_id"], "item_id": df.schema["item_id"], "relevance": pl.Float64},
    )
    if "fold" in by_keys(options):
        return truth
    return truth.filter(pl.col("fold") == 1).drop("fold")


#: user-level metrics of every family, for the mean-of-per_user rule (the group-level ones have
#: no per-user value)
EVERY_USER_METRIC = [
    *("precision", "recall", "f1", "hit_rate", "r_precision", "ap", "rr", "dcg", "ndcg"),
    *("judged", "num_ret", "num_rel_ret", "bpref", "infap", "set_precision", "set_f1", "rbp", "rbp_residual", "err", "auc"),
]


@SETTINGS
@given(long_frames(with_score=False), st.data())
def test_summary_is_the_plain_mean_of_per_user(case: tuple[pl.DataFrame, dict[str, Any]], data: st.DataObject) -> None:
    """The obvious route agrees: per_user(...) grouped by the keys and averaged with a plain
    .mean() (no filter) gives summary(...)'s numbers, for every metric and option: a user the
    means leave out has nulls in per_user, never a 0 that .mean() would count."""
    df, options = case
    profile = data.draw(st.sampled_from(["recframe", "trec_eval", "ranx", "recommenders", "lenskit", "evidently"]))
    metrics = [m for m in EVERY_USER_METRIC if recframe.profiles.has_metric(recframe.profiles.PROFILES[profile], m)]
    if profile == "recframe":
        options |= {
            "metrics": metrics,
            "empty_users": data.draw(st.sampled_from(["skip", "zero"])),
            "unranked_users": data.draw(st.sampled_from(["skip", "zero"])),
            "unjudged_users": data.draw(st.sampled_from(["skip", "empty"])),
        }
    else:  # the profile's conventions, on the same lists
        shared = ("k", "by", "users", "unlisted_users", "exclude", "threshold")
        options = {key: value for key, value in options.items() if key in shared} | {"profile": profile, "metrics": metrics}
    per_user = recframe.per_user(df, **options)
    summary = recframe.summary(df, **options)
    keys = by_keys(options)
    metric_columns = [c for c in summary.columns if "@" in c or c in EVERY_USER_METRIC or c in reference.IR_METRICS]
    assert metric_columns
    means = per_user.group_by(keys).agg(pl.col(metric_columns).mean()) if keys else per_user.select(pl.col(metric_columns).mean())
    for row in summary.iter_rows(named=True):
        group = means.filter(*(pl.col(k) == row[k] for k in keys)) if keys else means
        for column in metric_columns:
            mean = group[column].item() if group.height else None
            assert_close(row[column], mean, f"{profile} {row} {column}")


@SETTINGS
@given(long_frames(with_score=False))
def test_categorical_ids_give_the_same_numbers(case: tuple[pl.DataFrame, dict[str, Any]]) -> None:
    df, options = case

    def categorical(frame: pl.DataFrame) -> pl.DataFrame:
        ids = [c for c in ("user_id", "item_id") if c in frame.columns]
        return frame.with_columns(pl.col(ids).cast(pl.String).cast(pl.Categorical))

    plain = recframe.per_user(df, **options)
    categorical = recframe.per_user(categorical(df), **call_options(options, categorical))
    assert_frame_equal(
        categorical.with_columns(pl.col("user_id").cast(pl.String)),
        plain.with_columns(pl.col("user_id").cast(pl.String)),
        rel_tol=1e-12,
        abs_tol=1e-12,  # parallel sums may differ in the last ulp
    )


@settings(SETTINGS, max_examples=24)  # each example runs the plan six ways
@given(long_frames(with_score=False), st.integers(0, 2**32 - 1))
def test_row_order_changes_no_number(case: tuple[pl.DataFrame, dict[str, Any]], seed: int) -> None:
    # in memory, lists that come as contiguous runs of rows are grouped by their run number
    # (recframe.engine._frames.list_runs); shuffled rows split lists into several runs and take the
    # keys' group-by, as a LazyFrame always does: the same numbers every way
    df, options = case
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=seed)
    lazy = call_options(options, lambda f: f.lazy())
    want, want_summary = recframe.per_user(df.lazy(), **lazy).collect(), recframe.summary(df.lazy(), **lazy).collect()
    for frame in (df, shuffled):
        assert_frame_equal(recframe.per_user(frame, **options), want, rel_tol=1e-12, abs_tol=1e-12)
        assert_frame_equal(recframe.summary(frame, **options), want_summary, rel_tol=1e-12, abs_tol=1e-12)


def test_list_runs_number_contiguous_lists_only() -> None:
    rows = pl.DataFrame({"model": ["A", "A", "B", "B", "A"], "user": [5, 5, 5, 6, 7]})
    numbered = _frames.list_runs(nw.from_native(rows.lazy()), ["model", "user"], "list")
    assert numbered is not None
    # the same user on both sides of a model boundary: two lists, two runs
    assert numbered.to_native().collect()["list"].to_list() == [0, 0, 1, 2, 3]
    assert numbered.to_native().collect()["list"].flags["SORTED_ASC"]
    split = pl.DataFrame({"model": ["A", "B", "A"], "user": [1, 1, 1]})  # (A, 1) in two runs
    assert _frames.list_runs(nw.from_native(split.lazy()), ["model", "user"], "list") is None
    # null keys equal each other, a null first row included (the checks refuse null keys later)
    nulls = pl.DataFrame({"model": [None, None, "A", "A"], "user": [1, 1, 1, None]})
    numbered = _frames.list_runs(nw.from_native(nulls.lazy()), ["model", "user"], "list")
    assert numbered is not None and numbered.to_native().collect()["list"].to_list() == [0, 0, 1, 2]


def test_the_reference_covers_every_metric_and_convention():
    """The property tests compare the columns the reference computes: a metric or convention
    added to recframe without a reference would go unchecked. Conventions the random frames
    do not draw are listed with the test that checks them by hand."""
    import inspect

    from recframe.conventions import CHOICES
    from recframe.metrics import REGISTRY

    known = {
        *reference.ALL_METRICS,
        *reference.BEYOND_USER,
        *reference.BEYOND_GROUP,
        *reference.IR_METRICS,
        *reference.ITEM_GROUP_USER,
        *reference.ITEM_GROUP_GROUP,
    }
    assert set(REGISTRY) <= known, set(REGISTRY) - known
    modelled = set(inspect.signature(reference.per_user).parameters) | {"novelty", "popularity", "cold_items", "distance"}
    modelled |= set(inspect.signature(reference.ir_metrics_of_list).parameters)  # test_ir_measures
    modelled |= {"calibration_weight", "calibration_alpha"}  # reference.item_groups (test_item_groups)
    checked_elsewhere = {
        "idcg": "test_seed_examples / test_profiles (rectools golden)",
        "discount": "test_profiles (lenskit golden)",
        "rr_cutoff": "test_peers (trec_eval)",
        "ties": "test_ties / test_engines",
        "score_dtype": "test_engines / test_golden (trec_eval)",
        "unranked_users": "test_context / test_profiles",
        "unjudged_users": "test_ir_measures (pytrec_eval's queries) / test_trec",
    }
    missing = [name for name in CHOICES if name not in modelled and name not in checked_elsewhere]
    assert not missing, f"conventions with no reference and no hand-worked test: {missing}"


# ---------------------------------------------------------------------------- duplicate scope


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_duplicates_outside_the_checked_rows_change_no_number(backend: str) -> None:
    """The default duplicate check (check_duplicates="used") reads the relevant rows and the
    rows ranked within the largest k, when ranks are used as given: a copy of any other row
    (not relevant, ranked past every k or not at all) leaves every requested number as it
    was, and a copy of a row it reads is refused."""

    @settings(SETTINGS, max_examples=24 if backend.startswith("polars") else 6)
    @given(long_frames(with_score=False), st.data())
    def run(case: tuple[pl.DataFrame, dict[str, Any]], data: st.DataObject) -> None:
        df, options = case
        options = {key: value for key, value in options.items() if key not in ("exclude", "rank_gaps")}
        options |= {"rank_gaps": "keep", "metrics": data.draw(st.lists(st.sampled_from(EVERY_USER_METRIC[:9]), min_size=1))}
        threshold = options["threshold"]
        relevant = (pl.col("relevance") >= threshold) if threshold is not None else (pl.col("relevance") > 0)
        checked = relevant.fill_null(False) | (pl.col("rank") <= max(options["k"])).fill_null(False)
        if "users" in options:  # only the listed users' rows: an unlisted one is dropped anyway
            df = df.filter(pl.col("user_id").is_in(options["users"]["user_id"].implode()))
        outside, inside = df.filter(~checked), df.filter(checked)
        convert = BACKENDS[backend]
        call = call_options(options, convert)
        if outside.height:
            row = outside.sample(1, seed=data.draw(st.integers(0, 99)))
            if row["rank"].item() is not None:  # another rank past every k (or the same)
                row = row.with_columns(rank=pl.col("rank") + data.draw(st.sampled_from([0, 1, 100])))
            clean = to_polars(recframe.per_user(convert(df), **call))
            copied = to_polars(recframe.per_user(convert(pl.concat([df, row])), **call))
            assert_frame_equal(copied, clean, rel_tol=1e-12, abs_tol=1e-12)
        if inside.height:
            row = inside.sample(1, seed=data.draw(st.integers(0, 99)))
            with pytest.raises(recframe.RecframeError, match=r"duplicate"):
                to_polars(recframe.per_user(convert(pl.concat([df, row])), **call))

    run()
