"""The shape of the API: names, signatures, types in and out, columns, empty inputs."""

from __future__ import annotations

import inspect
import math
import subprocess
import sys

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from polars.testing import assert_frame_equal

import recframe
import recframe.profiles
from conftest import to_polars
from recframe.data import load_sample

EXPECTED_PARAMETERS = [
    "frame",
    "k",
    "metrics",
    "user",
    "item",
    "rank",
    "score",
    "relevance",
    "threshold",
    "by",
    "truth",
    "users",
    "exclude",
    "unlisted_users",
    "train",
    "items",
    "item_features",
    "baseline",
    "head_share",
    "item_group",
    "score_threshold",
    "profile",
    "precision_denominator",
    "recall_denominator",
    "ap_denominator",
    "gain",
    "idcg",
    "discount",
    "rr_cutoff",
    "ties",
    "score_dtype",
    "empty_users",
    "unranked_users",
    "unjudged_users",
    "rank_gaps",
    "novelty",
    "popularity",
    "cold_items",
    "distance",
    "gain_threshold",
    "persistence",
    "max_grade",
    "auc_without_negatives",
    "recall_rounding",
    "negative_relevance",
    "calibration_weight",
    "calibration_alpha",
    "check_duplicates",
    "checks",
]
CONVENTIONS = [
    "precision_denominator",
    "recall_denominator",
    "ap_denominator",
    "gain",
    "idcg",
    "discount",
    "rr_cutoff",
    "ties",
    "score_dtype",
    "empty_users",
    "unranked_users",
    "unjudged_users",
    "rank_gaps",
    "novelty",
    "popularity",
    "cold_items",
    "distance",
    "gain_threshold",
    "persistence",
    "max_grade",
    "auc_without_negatives",
    "recall_rounding",
    "negative_relevance",
    "calibration_weight",
    "calibration_alpha",
]
COUNTS = ["n_users", "n_skipped", "n_unranked", "n_no_relevant", "n_no_truth"]


def small() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "model": ["A", "A", "A", "B", "B"],
            "user_id": ["x", "x", "y", "x", "y"],
            "item_id": [1, 2, 3, 1, 3],
            "rank": [1, 2, 1, 1, None],
            "relevance": [1.0, None, 0.0, 1.0, 1.0],
        }
    )


# summary only: its intervals (ci=None keeps the output as it was)
SUMMARY_ONLY = {"ci": None, "ci_method": "bootstrap", "n_resamples": 1000, "seed": None, "aggregate": "mean", "partitions": None}


@pytest.mark.parametrize("function", [recframe.per_user, recframe.summary])
def test_signature_and_defaults(function):
    # frame, k and metrics, then the keyword options, declared once in recframe.options
    params = inspect.signature(function).parameters
    assert [(name, p.kind) for name, p in params.items()][-1] == ("options", inspect.Parameter.VAR_KEYWORD)
    extra = SUMMARY_ONLY if function is recframe.summary else {}
    names = recframe.options.SUMMARY_NAMES if function is recframe.summary else recframe.options.PER_USER_NAMES
    assert [*list(params)[:3], *names] == EXPECTED_PARAMETERS + list(extra)
    defaults = {name: p.default for name, p in params.items() if p.default is not inspect.Parameter.empty}
    defaults |= {name: recframe.options.DEFAULTS[name] for name in names}
    assert defaults == {
        "k": 10,
        "metrics": None,
        "user": "user_id",
        "item": "item_id",
        "rank": "rank",
        "score": None,
        "relevance": "relevance",
        "threshold": None,
        "by": None,
        "truth": None,
        "score_threshold": None,
        "users": None,
        "exclude": None,
        "unlisted_users": "error",
        "train": None,
        "items": None,
        "item_features": None,
        "baseline": None,
        "head_share": 0.2,
        "item_group": None,
        "profile": "recframe",
        "check_duplicates": "used",
        "checks": True,
        # None = not given, so that an explicit value can override the profile
        **{name: None for name in CONVENTIONS},
        **extra,
    }
    # the documented defaults are the "recframe" profile's
    assert recframe.profiles.PROFILES["recframe"].options == {
        "precision_denominator": "k",
        "recall_denominator": "relevant",
        "ap_denominator": "min_k_relevant",
        "gain": "linear",
        "idcg": "relevant",
        "discount": "log2_rank_plus_1",
        "rr_cutoff": True,
        "ties": "item_asc",
        "score_dtype": "float64",
        "empty_users": "skip",
        "unranked_users": "zero",
        "unjudged_users": "empty",
        "rank_gaps": "error",
        "novelty": "self_information",
        "popularity": "count",
        "cold_items": "count",
        "distance": "hamming",
        "gain_threshold": "threshold",
        "persistence": 0.8,
        "max_grade": 4.0,
        "auc_without_negatives": "one",
        "recall_rounding": "add_0.9",
        "negative_relevance": "grade",
        "calibration_weight": "uniform",
        "calibration_alpha": 0.01,
    }
    # keyword only: a positional fourth argument is refused
    with pytest.raises(TypeError):
        function(small(), 1, ["precision"], "user_id")  # type: ignore[call-arg]


@pytest.mark.parametrize("name", ["per_user", "summary"])
@pytest.mark.parametrize("owner", [pl.DataFrame, pl.LazyFrame, pd.DataFrame])
def test_namespace_forwards_with_identical_signature_and_docstring(owner, name):
    function = getattr(recframe, name)
    method = getattr(owner.recmetrics, name) if owner is not pd.DataFrame else getattr(recframe.RecMetrics, name)
    assert method.__doc__ == function.__doc__
    method_params = list(inspect.signature(method).parameters.values())
    function_params = list(inspect.signature(function).parameters.values())
    assert method_params[1:] == function_params[1:]


def test_docstrings_give_formulas_and_examples():
    for function in (recframe.per_user, recframe.summary):
        doc = function.__doc__
        for section in ("Parameters", "Returns", "Notes", "Examples"):
            assert section in doc
        assert "log2(i + 1)" in doc and "min(k, R)" in doc


def test_same_type_out_as_in():
    df = small()
    assert isinstance(recframe.per_user(df, by="model"), pl.DataFrame)
    assert isinstance(recframe.summary(df.lazy(), by="model"), pl.LazyFrame)
    assert isinstance(recframe.per_user(df.to_pandas(), by="model"), pd.DataFrame)
    assert isinstance(recframe.summary(df.to_arrow(), by="model"), pa.Table)


def test_lazy_in_lazy_out_and_streaming():
    lazy = small().lazy().recmetrics.summary(k=[1, 2], by="model")
    assert isinstance(lazy, pl.LazyFrame)
    eager = recframe.summary(small(), k=[1, 2], by="model")
    assert lazy.collect(engine="streaming").equals(eager)
    assert lazy.collect(engine="in-memory").equals(eager)


def test_output_columns_order_and_dtypes():
    out = recframe.per_user(small(), k=[2, 1], metrics=["ndcg", "r_precision"], by="model")
    assert out.columns == ["model", "user_id", "n_relevant", "ndcg@2", "ndcg@1", "r_precision", "r_precision@2", "r_precision@1"]
    assert out.schema["n_relevant"] == pl.Int64
    assert all(out.schema[c] == pl.Float64 for c in out.columns[3:])
    assert out.select("model", "user_id").rows() == [("A", "x"), ("A", "y"), ("B", "x"), ("B", "y")]
    s = recframe.summary(small(), k=1, metrics=["recall"], by="model")
    assert s.columns == ["model", *COUNTS, "recall@1"]
    assert all(s.schema[c] == pl.Int64 for c in COUNTS)


def test_default_metrics_are_all_metrics_in_order():
    out = recframe.per_user(small(), k=3, by="model")
    assert out.columns[3:] == [
        "precision@3",
        "recall@3",
        "f1@3",
        "hit_rate@3",
        "r_precision",
        "r_precision@3",
        "ap@3",
        "rr@3",
        "dcg@3",
        "ndcg@3",
    ]
    accuracy = ("precision", "recall", "f1", "hit_rate", "r_precision", "ap", "rr", "dcg", "ndcg")
    # every metric by name; the default is those that need no side input and have a value per user
    assert recframe.METRICS[:9] == accuracy and "novelty" in recframe.METRICS and "gini" in recframe.METRICS


def test_empty_user_policy():
    df = small()
    skip = recframe.per_user(df, k=1, metrics=["precision", "hit_rate", "recall", "ndcg"], by="model")
    # A/y has no relevant item: left out of the mean, so null for every metric (precision and
    # hit rate too, whose formulas give 0), and a plain mean of per_user is summary's mean
    row = skip.filter(model="A", user_id="y").row(0, named=True)
    assert row == {
        "model": "A",
        "user_id": "y",
        "n_relevant": 0,
        "precision@1": None,
        "hit_rate@1": None,
        "recall@1": None,
        "ndcg@1": None,
    }
    summary = recframe.summary(df, k=1, metrics=["precision"], by="model")
    means = skip.group_by("model").agg(pl.col("precision@1").mean()).sort("model")
    assert means["precision@1"].to_list() == summary["precision@1"].to_list()
    assert summary.row(0, named=True) == {
        "model": "A",
        "n_users": 1,
        "n_skipped": 1,
        "n_unranked": 0,
        "n_no_relevant": 1,
        "n_no_truth": 0,
        "precision@1": 1.0,
    }
    zero = recframe.summary(df, k=1, metrics=["precision", "recall"], by="model", empty_users="zero")
    assert zero.row(0, named=True) == {
        "model": "A",
        "n_users": 2,
        "n_skipped": 0,
        "n_unranked": 0,
        "n_no_relevant": 1,
        "n_no_truth": 0,
        "precision@1": 0.5,
        "recall@1": 0.5,
    }


def test_user_with_relevant_items_but_no_recommendation_scores_zero():
    # B/y: its one relevant item has no rank
    out = recframe.per_user(small(), k=2, metrics=["recall", "ap", "rr", "ndcg"], by="model")
    assert out.filter(model="B", user_id="y").row(0)[2:] == (1, 0.0, 0.0, 0.0, 0.0)


def test_user_none_treats_the_frame_as_one_list():
    df = small().filter(model="A", user_id="x").drop("user_id", "model")
    out = recframe.per_user(df, k=2, metrics=["precision"], user=None)
    assert out.columns == ["n_relevant", "precision@2"]
    assert out.rows() == [(1, 0.5)]


def test_score_ranks_descending_with_ties_by_item():
    df = pl.DataFrame(
        {
            "user_id": [1, 1, 1, 1],
            "item_id": ["c", "a", "b", "d"],
            "score": [0.9, 0.5, 0.5, None],  # a and b tie: a first; d unscored = not recommended
            "relevance": [0, 0, 1, 1],
        }
    )
    out = recframe.per_user(df, k=[2, 3], metrics=["rr", "recall"], score="score")
    assert out.row(0, named=True) == {"user_id": 1, "n_relevant": 2, "rr@2": 0.0, "rr@3": 1 / 3, "recall@2": 0.0, "recall@3": 0.5}


def test_truth_broadcasts_over_by_groups():
    recs = pl.DataFrame({"model": ["A", "A", "B"], "user_id": [1, 1, 1], "item_id": [5, 6, 7], "rank": [1, 2, 1]})
    truth = pl.DataFrame({"user_id": [1, 1, 2], "item_id": [6, 9, 3], "relevance": [1.0, 1.0, 1.0]})
    out = recframe.per_user(recs, truth=truth, k=2, metrics=["recall"], by="model")
    # user 2 has truth but no recommendations from either model: scored 0 for both
    assert out.rows() == [("A", 1, 2, 0.5), ("A", 2, 1, 0.0), ("B", 1, 2, 0.0), ("B", 2, 1, 0.0)]


def test_k_beyond_the_list():
    out = recframe.per_user(small(), k=50, metrics=["precision", "recall"], by="model")
    assert out.filter(model="A", user_id="x").row(0)[3:] == (1 / 50, 1.0)


@pytest.mark.parametrize("lazy", [False, True])
def test_empty_frame_gives_empty_result_with_columns(lazy):
    df = small().clear()
    df = df.lazy() if lazy else df
    for function, first in ((recframe.per_user, ["model", "user_id", "n_relevant"]), (recframe.summary, ["model", *COUNTS])):
        out = to_polars(function(df, k=5, metrics=["precision"], by="model"))
        assert out.columns == [*first, "precision@5"] and out.height == 0
    out = to_polars(recframe.summary(df, k=5, metrics=["precision"]))
    assert out.columns == [*COUNTS, "precision@5"] and out.height == 0


def test_empty_pandas_frame():
    df = small().clear().to_pandas()
    out = recframe.per_user(df, k=5, metrics=["precision"])
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["user_id", "n_relevant", "precision@5"] and len(out) == 0


def test_custom_column_names():
    df = small().rename({"user_id": "customer", "item_id": "sku", "rank": "pos", "relevance": "stars"})
    out = recframe.per_user(df, k=2, metrics=["recall"], user="customer", item="sku", rank="pos", relevance="stars", by="model")
    assert out.columns == ["model", "customer", "n_relevant", "recall@2"]


def test_pandas_round_trip_keeps_id_types():
    recs, truth = load_sample("pandas")
    out = recs.recmetrics.per_user(truth=truth, k=5, metrics=["ndcg"], relevance="rating", threshold=4, by="model")
    assert isinstance(out, pd.DataFrame)
    assert out["user_id"].dtype.kind == "i"
    assert out["model"].tolist()[0] == "personal"
    polars_out = recframe.per_user(
        load_sample()[0], truth=load_sample()[1], k=5, metrics=["ndcg"], relevance="rating", threshold=4, by="model"
    )
    # the same plan runs for both; sums may differ in the last ulp between runs
    assert_frame_equal(polars_out, pl.from_pandas(out), rel_tol=1e-12, abs_tol=1e-12)


def test_namespace_registration_is_idempotent(monkeypatch):
    """register() again adds nothing: each owner's namespace is registered once (a second
    registration would warn about overriding, and pandas would build the accessor twice)."""
    import warnings

    calls: list[str] = []
    monkeypatch.setattr(pd.api.extensions, "register_dataframe_accessor", lambda name: calls.append(f"pandas {name}"))
    monkeypatch.setattr(pl.api, "register_dataframe_namespace", lambda name: calls.append(f"polars {name}"))
    monkeypatch.setattr(pl.api, "register_lazyframe_namespace", lambda name: calls.append(f"lazy {name}"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        recframe.register()
    assert calls == []  # already registered on import: nothing registered again
    for owner in (pl.DataFrame, pl.LazyFrame, pd.DataFrame):
        assert owner.recmetrics is recframe.RecMetrics


def test_the_pandas_namespace_is_there_whichever_is_imported_first():
    """recframe does not import pandas or pyarrow (a Polars user's process, and the trec_eval
    drop-in, never load them); pandas imported after recframe gets ``.recmetrics`` all the
    same, and before it too. Fresh interpreters: this one has imported pandas already."""
    frame = "pd.DataFrame({'user_id': [1, 1], 'item_id': [1, 2], 'rank': [1, 2], 'relevance': [1, 0]})"
    use = f"print(sorted({frame}.recmetrics.per_user(k=2, metrics=['precision'])['precision@2']))"
    after = f"import sys, recframe; print('pandas' in sys.modules, 'pyarrow' in sys.modules); import pandas as pd; {use}"
    before = f"import pandas as pd; import recframe; {use}"
    outputs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        for code in (after, before)
    ]
    assert outputs == ["False False\n[0.5]\n", "[0.5]\n"]


def test_truth_users_count_without_by_even_when_nothing_was_recommended():
    recs = pl.DataFrame(schema={"user_id": pl.Int64, "item_id": pl.Int64, "rank": pl.Int64})
    truth = pl.DataFrame({"user_id": [7], "item_id": [1], "relevance": [1.0]})
    out = recframe.per_user(recs, truth=truth, k=3, metrics=["recall"])
    assert out.rows() == [(7, 1, 0.0)]


def test_conventions_are_defined_once():
    """conventions.TABLE is the one definition: the typed Conventions object, the defaults, the
    docstrings and the options every function takes follow it."""
    import dataclasses
    import typing

    from recframe import conventions

    assert [f.name for f in dataclasses.fields(conventions.Conventions)] == list(conventions.DEFAULTS)
    assert conventions.Conventions.default() == conventions.Conventions(**conventions.DEFAULTS)
    hints = typing.get_type_hints(recframe.options.Options)
    for name, (kind, *_) in conventions.TABLE.items():
        assert hints[name] == kind, name  # typed for IDEs and type checkers
        assert recframe.options.DEFAULTS[name] is None  # None = not given: the profile's value
    for function in (recframe.per_user, recframe.summary, recframe.curve):
        options = inspect.signature(function).parameters["options"]
        assert options.kind is inspect.Parameter.VAR_KEYWORD and str(options.annotation).startswith("Unpack["), function
        if function is recframe.curve:
            continue  # its options are documented "as for summary", by name
        for name, (_, text, *_) in conventions.TABLE.items():
            assert f"    {name} : " in function.__doc__, (function.__name__, name)
            assert " ".join(text.split())[:40] in " ".join((function.__doc__ or "").split())


def test_each_default_is_written_once():
    """An option's default is written in one place of src/: its declaration (recframe.options or
    recframe.conventions), never again in a signature, a dataclass or a command-line flag."""
    import re
    from pathlib import Path

    # the modules of the functions that take the options: per_user, summary, curve, compare,
    # the namespace and the command line
    root = Path(recframe.__file__).parent
    modules = [
        "api.py",
        "curve.py",
        "statistics/compare.py",
        "engine/_validate.py",
        "_namespace.py",
        "profiles.py",
        "cli/_options.py",
        "cli/_commands.py",
    ]
    sources = {root / m: (root / m).read_text() for m in modules}
    for name, default in recframe.options.DEFAULTS.items():
        if default is None or isinstance(default, bool):
            continue
        for spelling in {name, name.replace("_", "-")}:
            value = re.escape(repr(default)).replace("'", "[\"']")
            # a parameter or field (name: type = default) or a flag (--name ..., default=default)
            pattern = re.compile(rf"\b{re.escape(spelling)}: [^=\n]+= {value}\b|--{re.escape(spelling)}\b[^)]*default={value}")
            for path, text in sources.items():
                assert not pattern.search(text), f"{name}'s default {default!r} written again in {path.name}"
    assert not any("locals()" in text for text in sources.values())


def test_the_version_is_defined_once():
    import importlib.metadata
    import re
    from pathlib import Path

    assert re.fullmatch(r"\d+\.\d+\.\d+", recframe.__version__)
    assert importlib.metadata.version("recframe") == recframe.__version__  # the package's metadata reads it
    pyproject = (Path(__file__).parents[1] / "pyproject.toml").read_text()
    assert "\nversion =" not in pyproject.split("[tool.setuptools.dynamic]")[0]  # not restated in [project]


def test_geometric_mean_aggregate(constructor):
    # ap@2 per user: u1 1.0 (a at 1), u2 0.0 (nothing relevant in the top 2), u3 1/2 (b at 2)
    df = pl.DataFrame({
        "user_id": [1, 1, 2, 2, 3, 3], "item_id": ["a", "b", "a", "b", "a", "b"],
        "rank": [1, 2, 1, 2, 1, 2], "relevance": [1, 0, 0, 0, 0, 1],
    })  # fmt: skip
    df = pl.concat([df, pl.DataFrame({"user_id": [2], "item_id": ["c"], "rank": [None], "relevance": [1]}, schema=df.schema)])
    out = to_polars(recframe.summary(constructor(df), k=2, metrics=["ap"], aggregate="gmean"))
    expected = math.exp((math.log(1.0) + math.log(1e-5) + math.log(1 / 2)) / 3)
    assert out["ap@2"][0] == pytest.approx(expected, rel=1e-12)
    assert out["n_users"][0] == 3
    with pytest.raises(recframe.RecframeError, match=r"aggregate='mode': 'mode' is not a known aggregate"):
        recframe.summary(df, aggregate="mode")
    with pytest.raises(recframe.RecframeError, match=r"ci= gives intervals of the mean and of quantiles"):
        recframe.summary(df, aggregate="gmean", ci=0.95)
