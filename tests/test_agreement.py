"""Agreement between models (issue 42, item 3): overlap, Jaccard, rank-biased overlap and
Kendall's tau per user and pair of models, against a slow reference written from the formulas
(Webber, Moffat and Zobel 2010, eqs. 30 and 32) and scipy's kendalltau."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import recframe
from conftest import assert_values_close, run_cli, to_polars
from recframe import RecframeError

RECS = pl.DataFrame(
    {
        "model": ["A"] * 3 + ["B"] * 3,
        "user_id": [1] * 6,
        "item_id": ["x", "y", "z", "y", "x", "w"],
        "rank": [1, 2, 3, 1, 2, 3],
    }
)


def test_hand_worked_pair() -> None:
    row = recframe.agreement(RECS, k=3, by="model").row(0, named=True)
    # X_1 = 0, X_2 = 2 ({x, y}), X_3 = 2: eq. 30 with p = 0.9
    rbo = (2 / 3) * 0.9**3 + (0.1 / 0.9) * (0 + (2 / 2) * 0.9**2 + (2 / 3) * 0.9**3)
    assert row["rbo"] == pytest.approx(rbo, rel=1e-12)
    assert (row["n_common"], row["overlap"], row["jaccard"], row["kendall_tau"]) == (2, 2 / 3, 2 / 4, -1.0)


@pytest.mark.parametrize(
    ("a", "b", "p", "want"),
    [
        # the worked example published with a widely copied implementation (ragrawal's measures,
        # as quoted by b4ny4n/rankmeasures): RBO_ext = 0.828 to three decimals
        (["a", "b", "c", "d", "e"], ["b", "c", "d", "a", "e"], 0.9, 0.828),
        # identical lists agree fully at any p (eq. 30: X_d / d = 1 at every depth); disjoint ones not at all
        (["a", "b", "c"], ["a", "b", "c"], 0.5, 1.0),
        (["a", "b", "c"], ["d", "e", "f"], 0.9, 0.0),
    ],
)
def test_published_and_limiting_examples(a: list[str], b: list[str], p: float, want: float) -> None:
    recs = pl.DataFrame(
        {
            "model": ["A"] * len(a) + ["B"] * len(b),
            "user_id": 1,
            "item_id": a + b,
            "rank": [*range(1, len(a) + 1), *range(1, len(b) + 1)],
        }
    )
    assert recframe.agreement(recs, k=len(a), by="model", p=p)["rbo"].item() == pytest.approx(
        want, abs=5e-4 if want == 0.828 else 1e-12
    )


def rbo_ext(s_list: list, l_list: list, p: float) -> float:
    """RBO_ext by eq. 32 (eq. 30 when the lengths are equal), depth by depth."""
    if len(s_list) > len(l_list):
        s_list, l_list = l_list, s_list
    s, long = len(s_list), len(l_list)

    def x(d: int) -> int:
        return len(set(s_list[: min(d, s)]) & set(l_list[:d]))

    total = sum(x(d) / d * p**d for d in range(1, long + 1)) + sum(
        x(s) * (d - s) / (s * d) * p**d for d in range(s + 1, long + 1)
    )
    return (1 - p) / p * total + ((x(long) - x(s)) / long + x(s) / s) * p**long


def reference(df: pl.DataFrame, k: int, p: float) -> dict[tuple, dict[str, float | None]]:
    from scipy.stats import kendalltau

    lists = {
        (m, u): g.sort("rank").filter(pl.col("rank") <= k)["item_id"].to_list() for (m, u), g in df.group_by("model", "user_id")
    }
    models = sorted(df["model"].unique().to_list())
    users = sorted(df["user_id"].unique().to_list())
    out = {}
    for a, b in itertools.combinations(models, 2):
        for u in users:
            la, lb = lists.get((a, u), []), lists.get((b, u), [])
            if not la and not lb:
                continue
            common = set(la) & set(lb)
            tau = None
            if len(common) >= 2:
                items = sorted(common)
                tau = kendalltau([la.index(i) for i in items], [lb.index(i) for i in items]).statistic
            out[(a, b, u)] = {
                "n_common": len(common),
                "overlap": len(common) / k,
                "jaccard": len(common) / len(set(la) | set(lb)),
                "rbo": rbo_ext(la, lb, p) if la and lb else None,
                "kendall_tau": tau,
            }
    return out


def random_lists(seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for model in ("A", "B", "C"):
        for user in range(25):
            length = int(rng.integers(0, 9))  # uneven lists, some empty
            items = rng.choice(12, size=length, replace=False)
            rows += [(model, user, f"i{item:02d}", rank) for rank, item in enumerate(items, start=1)]
    return pl.DataFrame(rows, schema=["model", "user_id", "item_id", "rank"], orient="row")


@pytest.mark.parametrize("p", [0.5, 0.9])
def test_agreement_equals_the_reference_on_every_backend(constructor, p: float) -> None:
    df = random_lists(7)
    k = 6
    got = to_polars(recframe.agreement(constructor(df), k=k, by="model", p=p))
    want = reference(df, k, p)
    assert got.height == len(want)
    for row in got.iter_rows(named=True):
        expected = want[(row["model_a"], row["model_b"], row["user_id"])]
        for column, value in expected.items():
            if value is None:
                assert row[column] is None, (column, row)
            else:
                assert row[column] == pytest.approx(value, rel=1e-12, abs=1e-12), (column, row, value)


def test_baseline_and_other_keys() -> None:
    df = random_lists(3).with_columns(fold=pl.lit(1))
    both = pl.concat([df, df.with_columns(fold=pl.lit(2), rank=pl.col("rank"))])
    out = recframe.agreement(both, k=5, by=["model", "fold"], baseline="A")
    assert set(zip(out["model_a"], out["model_b"])) == {("B", "A"), ("C", "A")}
    assert out.columns[:4] == ["fold", "model_a", "model_b", "user_id"]
    one = out.filter(pl.col("fold") == 1).drop("fold")
    two = out.filter(pl.col("fold") == 2).drop("fold")
    assert_frame_equal(one, two, rel_tol=1e-12)  # the folds are kept apart, and hold the same lists


@pytest.mark.parametrize(
    ("kwargs", "message", "argument"),
    [
        ({"p": 1.0}, r"p=1.0 must be a number strictly between 0 and 1", "p"),
        ({"p": 0}, r"p=0 must be a number strictly between 0 and 1", "p"),
        ({"k": [5, 10]}, r"must be one positive whole number", "k"),
        ({"baseline": "Z"}, r"baseline='Z' is not a value of column 'model'", "baseline"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict, message: str, argument: str) -> None:
    with pytest.raises(RecframeError, match=message) as caught:
        recframe.agreement(RECS, by="model", **{"k": 3, **kwargs})
    assert caught.value.argument == argument


def test_one_model_is_refused() -> None:
    with pytest.raises(RecframeError, match="compares two models or more"):
        recframe.agreement(RECS.filter(pl.col("model") == "A"), k=3, by="model")
    with pytest.raises(RecframeError, match="names no model column"):
        recframe.agreement(RECS, k=3)


def test_a_null_model_is_refused_by_name_on_every_backend(constructor) -> None:
    """The data checks refuse a null model; on Polars they ride along the plan, and the model
    values were ordered before they ran (a raw TypeError comparing None with a string)."""
    frame = RECS.with_columns(pl.when(pl.col("item_id") == "w").then(None).otherwise(pl.col("model")).alias("model"))
    with pytest.raises(RecframeError, match=r"column 'model' has 1 null value\(s\)"):
        to_polars(recframe.agreement(constructor(frame), k=3, by="model"))


def test_the_command_line_writes_the_agreement_table(tmp_path) -> None:
    import io

    path = tmp_path / "recs.csv"
    random_lists(5).write_csv(path)
    code, out, err = run_cli("agreement", str(path), "--by", "model", "--k", "4", "--p", "0.8", "--format", "csv", "--quiet")
    assert code == 0, err
    want = recframe.agreement(random_lists(5), k=4, p=0.8, by="model")
    got = pl.read_csv(io.StringIO(out))
    assert_values_close(got["rbo"].to_list(), want["rbo"].to_list(), rel=1e-6, abs=1e-12, label="rbo")
    code, _, err = run_cli("agreement", str(path), "--by", "model", "--k", "4,5")
    assert code == 2 and "one depth" in err


def test_a_tiny_p_gives_the_limit_x1_on_every_backend(constructor_or_ibis) -> None:
    """Issue 58, item 5: p=1e-310 passes 0 < p < 1, and (1 - p) / p overflowed (inf, NaN).
    As p -> 0 RBO is X_1 (do the two lists share their first item): 1 for (x, y, z) against
    (x, z, w), 0 for RECS's (x, y, z) against (y, x, w); p=5e-324 (the smallest float) too."""
    same_top = RECS.with_columns(pl.Series("item_id", ["x", "y", "z", "x", "z", "w"]))
    for p in (1e-310, 5e-324):
        got = to_polars(recframe.agreement(constructor_or_ibis(same_top), k=3, by="model", p=p))["rbo"].item()
        assert got == pytest.approx(1.0, abs=1e-15)
        got = to_polars(recframe.agreement(constructor_or_ibis(RECS), k=3, by="model", p=p))["rbo"].item()
        assert got == pytest.approx(0.0, abs=1e-300)


def long_lists(users: int, length: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for model in ("A", "B"):
        for user in range(users):
            items = rng.permutation(length + length // 4)[:length]
            rows += [(model, user, f"i{item}", rank) for rank, item in enumerate(items, start=1)]
    return pl.DataFrame(rows, schema=["model", "user_id", "item_id", "rank"], orient="row")


def test_k_1000_is_a_join_not_a_chain_on_every_backend(constructor_or_ibis) -> None:
    """Issue 58, item 10: k >= 250 raised RecursionError (one `when` per depth). A trec-style
    depth of 1,000 on lists of 1,200 equals the reference, within seconds."""
    import time

    df = long_lists(2, 1200)
    start = time.perf_counter()
    got = to_polars(recframe.agreement(constructor_or_ibis(df), k=1000, by="model"))
    assert time.perf_counter() - start < 30
    want = reference(df, 1000, 0.9)
    assert got.height == len(want) == 2
    for row in got.iter_rows(named=True):
        expected = want[(row["model_a"], row["model_b"], row["user_id"])]
        for column in ("n_common", "overlap", "jaccard", "rbo", "kendall_tau"):
            assert row[column] == pytest.approx(expected[column], rel=1e-12, abs=1e-12), (column, row)


def test_k_past_the_longest_list_reads_the_whole_list_at_once(constructor_or_ibis) -> None:
    """Issue 58, item 7: agreement(k=sys.maxsize), the errors page's "whole list", built a depth
    table of k entries (O(k^2) in Python: it never returned). The table stops at the longest
    list: every measure but overlap (n_common / k) is that of k = the longest list."""
    import sys
    import time

    df = random_lists(7)
    start = time.perf_counter()
    whole = to_polars(recframe.agreement(constructor_or_ibis(df), k=sys.maxsize, by="model"))
    assert time.perf_counter() - start < 30
    at_8 = to_polars(recframe.agreement(constructor_or_ibis(df), k=8, by="model"))  # the longest list holds 8
    assert_frame_equal(whole.drop("overlap"), at_8.drop("overlap"), rel_tol=1e-12)
    assert whole["overlap"].to_list() == [c / sys.maxsize for c in at_8["n_common"].to_list()]


def test_the_command_line_compares_at_a_depth_of_300(tmp_path) -> None:
    """Issue 58, item 10: `recframe agreement --k 300` exited 1 ("a bug in recframe") on a
    RecursionError; it writes the table, equal to the function's."""
    import io

    path = tmp_path / "recs.csv"
    df = long_lists(2, 320)
    df.write_csv(path)
    code, out, err = run_cli("agreement", str(path), "--by", "model", "--k", "300", "--format", "csv", "--quiet")
    assert code == 0, err
    got = pl.read_csv(io.StringIO(out))
    want = reference(df, 300, 0.9)
    assert got["rbo"].to_list() == pytest.approx([want[("A", "B", u)]["rbo"] for u in got["user_id"]], rel=1e-12)


@pytest.mark.parametrize(
    ("column", "options", "argument", "hint"),
    [
        ("n_a", {"user": "n_a"}, "user='n_a'", 'user="user_id"'),
        ("overlap", {"user": "overlap"}, "user='overlap'", 'user="user_id"'),
        ("model_a", {"by": ["model", "model_a"]}, "by=['model', 'model_a']", 'by=["model", "model_a_key"]'),
        ("rbo", {"by": ["model", "rbo"]}, "by=['model', 'rbo']", 'by=["model", "rbo_key"]'),
    ],
)
def test_a_column_named_as_a_result_column_is_refused_on_every_backend(
    constructor_or_ibis, column, options, argument, hint
) -> None:
    """Issue 58, item 13: a user column named n_a or overlap, or a key named model_a, made a
    result with two columns of that name (a raw DuplicateError on Polars)."""
    frame = RECS.with_columns(pl.lit(1).alias(column)) if options.get("by") else RECS.rename({"user_id": column})
    with pytest.raises(RecframeError) as caught:
        to_polars(recframe.agreement(constructor_or_ibis(frame), k=3, **{"by": "model", **options}))
    assert str(caught.value) == (
        f"{argument}: column {column!r} has the name of a column of agreement's result (model_a, model_b, n_a, n_b, "
        f"n_common, overlap, jaccard, rbo, kendall_tau). Hint: rename the column in the inputs and pass the new name, "
        f"e.g. {hint}."
    )


def test_a_model_column_named_as_a_result_column_is_no_clash() -> None:
    """The model column itself is not in the result (model_a and model_b hold its values)."""
    got = recframe.agreement(RECS.rename({"model": "model_a"}), k=3, by="model_a")
    assert got.select("model_a", "model_b", "n_common").rows() == [("A", "B", 2)]
