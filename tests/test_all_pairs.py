"""compare without baseline= (every pair of models), the randomized paired Tukey HSD test, the
letter table and the fold combination (issue 40, item 1).

Expected values are the hand calculation; the Tukey HSD p-values are checked against the
randomization test (two models), a full enumeration and a slow loop over resamples written
here (three and more models). scipy's ``tukey_hsd`` is the parametric test of independent
groups, not a reference: one test shows how far apart the two are on paired data."""

from __future__ import annotations

import io
import itertools
import math

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import recframe
from conftest import to_polars
from recframe import stats
from recframe.cli import main
from recframe.compare import PAIR_COLUMNS, SAME_WITHIN, letter_columns
from recframe.errors import RecframeError

# three models, four users; user 5 is scored by A and B only
A = [1.0, 0.5, 0.5, 0.0]
B = [1.0, 1.0, 1.0, 0.5]
C = [0.5, 0.5, 0.0, 0.0]
PER_USER = pl.DataFrame(
    {
        "model": ["A"] * 5 + ["B"] * 5 + ["C"] * 4,
        "user_id": [1, 2, 3, 4, 5] * 2 + [1, 2, 3, 4],
        "rr@10": [*A, 1.0, *B, 0.0, *C],
        # a lower-is-better metric (registry: popularity): wins and losses swap, d_z does not
        "popularity@10": [*A, 1.0, *B, 0.0, *C],
    }
)


def by_pair(out: pl.DataFrame, metric: str) -> dict[tuple[str, str], dict]:
    return {(r["model_a"], r["model_b"]): r for r in out.filter(pl.col("metric") == metric).iter_rows(named=True)}


def test_columns_and_hand_worked_effect_size_and_wins():
    out = recframe.compare(PER_USER, test="paired_t")
    assert out.columns == list(PAIR_COLUMNS)
    assert out.select("model_a", "model_b").unique(maintain_order=True).rows() == [("A", "B"), ("A", "C"), ("B", "C")]
    rows = by_pair(out, "rr@10")
    # A - B over users 1..5: d = 0, -0.5, -0.5, -0.5, 1; mean -0.1
    ab = rows["A", "B"]
    assert (ab["n_pairs"], ab["n_dropped_a"], ab["n_dropped_b"]) == (5, 0, 0)
    assert ab["mean_a"] == pytest.approx((1 + 0.5 + 0.5 + 0 + 1) / 5)
    assert ab["delta"] == pytest.approx((0 - 0.5 - 0.5 - 0.5 + 1) / 5)
    d = np.array([0, -0.5, -0.5, -0.5, 1])
    sd = math.sqrt(sum((d + 0.1) ** 2) / (5 - 1))
    assert ab["d_z"] == pytest.approx(-0.1 / sd)
    assert (ab["wins"], ab["ties"], ab["losses"]) == (1, 1, 3)
    # A - C over users 1..4 (user 5 has no C): d = 0.5, 0, 0.5, 0; mean 1/4, s_d = sqrt(4 x 1/16 / 3)
    ac = rows["A", "C"]
    assert (ac["n_pairs"], ac["n_dropped_a"], ac["n_dropped_b"]) == (4, 1, 0)
    assert ac["d_z"] == pytest.approx(0.25 / math.sqrt(4 * 0.25**2 / 3))
    assert (ac["wins"], ac["ties"], ac["losses"]) == (2, 2, 0)
    # B - C: d = 0.5, 0.5, 1, 0.5: mean 0.625, s_d = sqrt((3 x 0.125^2 + 0.375^2) / 3) = 0.25
    bc = rows["B", "C"]
    assert (bc["delta"], bc["d_z"]) == (pytest.approx(0.625), pytest.approx(0.625 / 0.25))
    assert (bc["wins"], bc["ties"], bc["losses"]) == (4, 0, 0)
    # lower is better: a's wins are the users where a's value is lower
    low = by_pair(out, "popularity@10")
    for pair, row in rows.items():
        assert (low[pair]["wins"], low[pair]["ties"], low[pair]["losses"]) == (row["losses"], row["ties"], row["wins"])
        assert low[pair]["d_z"] == row["d_z"]


def test_d_z_is_null_without_spread_or_with_one_pair():
    frame = pl.DataFrame({"model": ["A", "A", "B", "B"], "user_id": [1, 2, 1, 2], "rr@10": [0.5, 1.0, 0.25, 0.75]})
    row = recframe.compare(frame).row(0, named=True)  # d = 0.25, 0.25: sd 0
    assert (row["delta"], row["d_z"], row["wins"]) == (0.25, None, 2)
    row = recframe.compare(frame.filter(pl.col("user_id") == 1)).row(0, named=True)
    assert (row["n_pairs"], row["d_z"], row["p_value"]) == (1, None, None)


def test_pairs_agree_with_the_baseline_comparison():
    """paired_t is deterministic: the row (A, B) is compare(baseline="A")'s row of B, sign flipped."""
    pytest.importorskip("scipy", reason="the paired t test needs scipy")
    pairs = by_pair(recframe.compare(PER_USER, test="paired_t", correction=None), "rr@10")
    base = recframe.compare(PER_USER, baseline="A", test="paired_t", correction=None).filter(pl.col("metric") == "rr@10")
    for row in base.iter_rows(named=True):
        pair = pairs["A", row["model"]]
        assert pair["delta"] == pytest.approx(-row["delta"])
        assert (pair["delta_lo"], pair["delta_hi"]) == (pytest.approx(-row["delta_hi"]), pytest.approx(-row["delta_lo"]))
        assert pair["p_value"] == pytest.approx(row["p_value"])
        assert (pair["mean_a"], pair["mean_b"]) == (row["baseline_mean"], row["model_mean"])


def test_holm_over_every_row_but_not_for_tukey():
    out = recframe.compare(PER_USER, test="randomization", seed=0, n_resamples=500)
    assert out.get_column("p_adjusted").to_list() == stats.adjust_pvalues(out.get_column("p_value").to_numpy(), "holm").tolist()
    tukey = recframe.compare(PER_USER, test="tukey_hsd", seed=0, n_resamples=500, correction="bonferroni")
    assert tukey.get_column("p_adjusted").to_list() == tukey.get_column("p_value").to_list()


def test_tukey_uses_the_users_with_every_model():
    out = recframe.compare(PER_USER, test="tukey_hsd", seed=0, n_resamples=200)
    rows = by_pair(out, "rr@10")
    # user 5 has no C: left out of every pair of the family, counted as dropped
    ab = rows["A", "B"]
    assert (ab["n_pairs"], ab["n_dropped_a"], ab["n_dropped_b"]) == (4, 1, 1)
    assert ab["delta"] == pytest.approx((0 - 0.5 - 0.5 - 0.5) / 4)
    assert (ab["wins"], ab["ties"], ab["losses"]) == (0, 1, 3)
    assert ab["d_z"] == pytest.approx(-0.375 / 0.25)
    # one simultaneous half-width (the HSD) for every pair of a metric
    widths = {round(r["delta_hi"] - r["delta"], 12) for r in rows.values()} | {
        round(r["delta"] - r["delta_lo"], 12) for r in rows.values()
    }
    assert len(widths) == 1


def test_tukey_on_two_models_is_the_randomization_test():
    rng = np.random.default_rng(7)
    # exact (2**10 <= 2000 assignments): the same p-value
    x, y = rng.random(10), rng.random(10)
    exact = stats.tukey_hsd_test(np.column_stack([x, y]), 2000)
    assert exact.p_values[0, 1] == pytest.approx(stats.randomization_test(x, y, 2000).p_value, rel=1e-12)
    # drawn: within Monte Carlo error (sd of each p about sqrt(p (1 - p) / B))
    x = rng.random(300)
    noise = rng.normal(0, 0.25, 300)
    y = x - 0.02 + noise - noise.mean()  # mean difference 0.02, about 1.4 standard errors
    b = 4000
    tukey = stats.tukey_hsd_test(np.column_stack([x, y]), b, seed=1).p_values[0, 1]
    randomization = stats.randomization_test(x, y, b, seed=2).p_value
    assert 0.01 < randomization < 0.9  # a p-value with room to disagree
    sd = math.sqrt(randomization * (1 - randomization) / b)
    assert abs(tukey - randomization) < 5 * math.sqrt(2) * sd + 2 / b


def slow_tukey(values: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The obvious reference: per resample, shuffle each user's row, take the range of the means."""
    rng = np.random.default_rng(seed)
    means = values.mean(axis=0)
    observed = np.abs(means[:, None] - means[None, :])
    count = np.zeros_like(observed)
    for _ in range(n_resamples):
        shuffled = np.array([rng.permutation(row) for row in values])
        permuted = shuffled.mean(axis=0)
        count += permuted.max() - permuted.min() >= observed - 1e-12
    return (count + 1) / (n_resamples + 1)


@pytest.mark.parametrize("path", ["table", "sort"])
def test_tukey_on_four_models_against_a_slow_reference(path, monkeypatch):
    if path == "sort":  # the permutations drawn by sorting random keys (more than 8 models)
        monkeypatch.setattr(stats, "PERMUTATION_TABLE_MAX_MODELS", 2)
    rng = np.random.default_rng(3)
    users = rng.random((40, 1))  # users differ a lot; the models by a little
    values = users + np.array([0.0, 0.02, 0.06, 0.12]) + rng.normal(0, 0.1, (40, 4))
    b = 1500
    got = stats.tukey_hsd_test(values, b, seed=11).p_values
    want = slow_tukey(values, b, seed=12)
    sd = np.sqrt(want * (1 - want) / b)
    assert (np.abs(got - want) <= 5 * np.sqrt(2) * sd + 2 / b).all(), (got, want)
    assert ((want > 0.05) & (want < 0.95)).any() and (want < 0.05).any()  # both kinds of pair are checked


def test_tukey_exact_is_the_full_enumeration():
    values = np.array([[0.1, 0.5, 0.2], [0.3, 0.9, 0.4], [0.0, 0.4, 0.8]])  # 3 users, (3!)**3 = 216 assignments
    means = values.mean(axis=0)
    ranges = []
    for perms in itertools.product(itertools.permutations(range(3)), repeat=3):
        permuted = np.array([row[list(p)] for row, p in zip(values, perms)]).mean(axis=0)
        ranges.append(permuted.max() - permuted.min())
    ranges = np.array(ranges)
    got = stats.tukey_hsd_test(values, 216)
    for a, b in itertools.combinations(range(3), 2):
        want = np.mean(ranges >= abs(means[a] - means[b]) - 1e-12)
        assert got.p_values[a, b] == pytest.approx(want, rel=1e-12)
    assert got.hsd == pytest.approx(np.quantile(ranges, 0.95))


def test_seeded_runs_are_reproducible():
    kw = dict(test="tukey_hsd", n_resamples=300)
    first = recframe.compare(PER_USER, seed=5, **kw)
    assert_frame_equal(first, recframe.compare(PER_USER, seed=5, **kw))
    assert_frame_equal(first, recframe.compare(PER_USER.lazy(), seed=5, **kw).collect())
    rng = np.random.default_rng(0)
    values = rng.random((30, 3))
    p1 = stats.tukey_hsd_test(values, 300, seed=1).p_values
    assert (p1 == stats.tukey_hsd_test(values, 300, seed=1).p_values).all()
    assert (p1 != stats.tukey_hsd_test(values, 300, seed=2).p_values).any()


def test_pairs_are_formed_within_each_fold():
    folds = pl.concat(
        [PER_USER.with_columns(fold=pl.lit(1)), PER_USER.with_columns(fold=pl.lit(2), user_id=pl.col("user_id") + 10)]
    ).with_columns(pl.when(pl.col("fold") == 2).then(pl.col("rr@10") / 2).otherwise(pl.col("rr@10")).alias("rr@10"))
    out = recframe.compare(folds, by=["model", "fold"], metrics=["rr@10"], test="tukey_hsd", seed=0, n_resamples=200)
    assert out.columns[:3] == ["fold", "model_a", "model_b"]
    assert out.height == 2 * 3
    for fold in (1, 2):  # the deterministic columns are those of the fold compared alone
        alone = recframe.compare(folds.filter(pl.col("fold") == fold).drop("fold"), metrics=["rr@10"], test="tukey_hsd")
        columns = ["model_a", "model_b", "n_pairs", "delta", "d_z", "wins", "ties", "losses"]
        assert_frame_equal(out.filter(pl.col("fold") == fold).select(columns), alone.select(columns))
    # fold 2 halves every value: deltas halve, d_z and the counts do not change
    one, two = (out.filter(pl.col("fold") == f) for f in (1, 2))
    assert two.get_column("delta").to_list() == pytest.approx([d / 2 for d in one.get_column("delta").to_list()])
    assert two.get_column("d_z").to_list() == pytest.approx(one.get_column("d_z").to_list())

    combined = recframe.combine_folds(out)
    pytest.importorskip("scipy", reason="the t interval needs scipy")
    row = combined.filter((pl.col("model_a") == "A") & (pl.col("model_b") == "B")).row(0, named=True)
    deltas = [r["delta"] for r in out.filter((pl.col("model_a") == "A") & (pl.col("model_b") == "B")).iter_rows(named=True)]
    assert (row["n_folds"], row["delta"]) == (2, pytest.approx(sum(deltas) / 2))
    lo, hi = stats.t_ci(np.array(deltas), 0.95)
    assert (row["delta_lo"], row["delta_hi"]) == (pytest.approx(lo), pytest.approx(hi))


def test_the_letter_table():
    # hand: B 0.875 > A 0.5 > C 0.25 (users 1..4 under tukey); which pairs differ is given here
    pairs = pl.DataFrame(
        {
            "model_a": ["A", "A", "B"], "model_b": ["B", "C", "C"], "metric": ["rr@10"] * 3, "n_pairs": [4, 4, 4],
            "mean_a": [0.5, 0.5, 0.875], "mean_b": [0.875, 0.25, 0.25], "significant": [False, False, True],
        }
    )  # fmt: skip
    out = recframe.compare_letters(pairs)
    assert out.rows() == [
        ("rr@10", "B", 0.875, 1, "a", True),
        ("rr@10", "A", 0.5, 2, "ab", True),
        ("rr@10", "C", 0.25, 3, "b", False),
    ]
    # lower is better: the lowest mean ranks first
    low = recframe.compare_letters(pairs.with_columns(metric=pl.lit("popularity@10")))
    assert low.get_column("model").to_list() == ["C", "A", "B"]
    assert low.get_column("letters").to_list() == ["a", "ab", "b"]
    # on a comparison: every model once per metric, lazy stays lazy
    full = recframe.compare(PER_USER, test="tukey_hsd", seed=0, n_resamples=200)
    letters = recframe.compare_letters(full.lazy())
    assert isinstance(letters, pl.LazyFrame)
    assert letters.collect().group_by("metric").len().get_column("len").to_list() == [3, 3]


@pytest.mark.parametrize("seed", range(20))
def test_letters_share_a_letter_exactly_when_not_different(seed):
    rng = np.random.default_rng(seed)
    models = list("ABCDEF")
    different = {frozenset(p) for p in itertools.combinations(models, 2) if rng.random() < 0.4}
    groups = letter_columns(models, different)
    for a, b in itertools.combinations(models, 2):
        shared = any(a in g and b in g for g in groups)
        assert shared == (frozenset((a, b)) not in different)
    assert all(any(m in g for g in groups) for m in models)


def test_scipy_tukey_hsd_is_not_the_paired_test():
    """scipy's tukey_hsd treats the models as independent groups: the spread between users
    swamps a small, consistent difference that the paired, randomized test finds."""
    scipy_stats = pytest.importorskip("scipy.stats", reason="scipy draws the contrast")
    rng = np.random.default_rng(0)
    users = rng.random(60)
    values = np.column_stack([users, users + 0.03 + rng.normal(0, 0.01, 60), users + rng.normal(0, 0.01, 60)])
    paired = stats.tukey_hsd_test(values, 2000, seed=0).p_values[0, 1]
    independent = scipy_stats.tukey_hsd(*values.T).pvalue[0, 1]
    assert paired < 0.01 < 0.5 < independent


@pytest.mark.parametrize(
    "frame, kwargs, match",
    [
        (
            PER_USER.filter(pl.col("model") == "A"),
            {},
            r"by='model': column 'model' of per_user_frame holds 1 model\(s\) \['A'\].*Hint",
        ),
        (PER_USER, {"n_resamples": 0}, r"n_resamples=0 is not a positive integer.*Hint"),
        (PER_USER, {"n_resamples": stats.MAX_RESAMPLES + 1, "test": "tukey_hsd"}, r"n_resamples=1000001 is more than.*Hint"),
        (
            PER_USER,
            {"baseline": "A", "test": "tukey_hsd"},
            r"test='tukey_hsd' compares every pair.*baseline='A'.*Hint: drop baseline=",
        ),
        (
            PER_USER.with_columns(user_id=pl.when(pl.col("model") == "C").then(pl.col("user_id") + 100).otherwise("user_id")),
            {},
            r"models 'A' and 'C' of column 'model' have no user in common.*user='user_id'.*Hint",
        ),
    ],
)
def test_bad_input(frame, kwargs, match):
    with pytest.raises(RecframeError, match=match):
        recframe.compare(frame, **kwargs)


def test_a_stratum_with_one_model_is_an_error():
    frame = pl.concat(
        [PER_USER.with_columns(fold=pl.lit(1)), PER_USER.filter(pl.col("model") == "A").with_columns(fold=pl.lit(2))]
    )
    with pytest.raises(RecframeError, match=r"the rows \(fold=2\) hold one model, 'A'.*Hint"):
        recframe.compare(frame, by=["model", "fold"])


def test_letters_and_folds_refuse_other_frames():
    base = recframe.compare(PER_USER, baseline="A", test="wilcoxon")
    with pytest.raises(
        RecframeError,
        match=r"lacks the columns \['model_a', 'model_b'.*Hint: pass the output of recframe.compare without baseline=",
    ):
        recframe.compare_letters(base)
    with pytest.raises(RecframeError, match=r"fold='fold' is not one of the comparison's key columns \[\].*Hint"):
        recframe.combine_folds(base)


def test_command_line_all_pairs_and_tukey(tmp_path, capsys):
    recs, truth = recframe.data.load_sample()
    recs.write_parquet(tmp_path / "recs.parquet")
    truth.write_parquet(tmp_path / "truth.parquet")
    flags = [str(tmp_path / "recs.parquet"), "--truth", str(tmp_path / "truth.parquet"), "--score", "score",
             "--relevance", "rating", "--threshold", "4", "--by", "model", "--k", "10", "--metrics", "ndcg", "--quiet"]  # fmt: skip
    code = main(["compare", *flags, "--test", "tukey_hsd", "--seed", "1", "--n-resamples", "200", "--format", "csv"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    got = pl.read_csv(io.StringIO(captured.out))
    per_user = recframe.per_user(
        recs, truth=truth, k=10, metrics=["ndcg"], score="score", relevance="rating", threshold=4, by="model"
    )
    want = recframe.compare(per_user, test="tukey_hsd", seed=1, n_resamples=200)
    assert got.columns == want.columns
    assert_frame_equal(got.select(want.columns[3:]), want.select(want.columns[3:]), check_dtypes=False, abs_tol=1e-12)

    code = main(["compare", *flags, "--test", "tukey_hsd", "--baseline", "popular"])
    lines = capsys.readouterr().err.splitlines()
    assert code == 2 and len(lines) == 1
    assert (
        "--test tukey_hsd compares every pair" in lines[0]
        and "--baseline popular" in lines[0]
        and "Hint: drop --baseline" in lines[0]
    )
    code = main(["compare", *flags, "--n-resamples", "0"])
    lines = capsys.readouterr().err.splitlines()
    assert code == 2 and len(lines) == 1 and "--n-resamples 0 is not a positive integer" in lines[0]


# ranx compiles its metrics with numba on first use (some 30 s): with the slow checks of .ci/run
@pytest.mark.slow_engine
def test_wins_ties_and_losses_are_ranx_s():
    """ranx's compare counts, per pair of runs and metric, the queries where the first scores
    higher, the same and lower: on ranx's own per-query nDCG (profile="ranx")."""
    ranx = pytest.importorskip("ranx", reason="ranx is a test-only extra: pip install ranx")
    rng = np.random.default_rng(4)
    truth_rows, runs = [], {m: {} for m in ("A", "B", "C")}
    qrels: dict[str, dict[str, int]] = {}
    for u in range(25):
        relevant = rng.choice(30, size=3, replace=False)
        qrels[f"u{u}"] = {f"i{i}": 1 for i in relevant}
        truth_rows += [(f"u{u}", f"i{i}", 1) for i in relevant]
        for m in runs:
            items = rng.choice(30, size=5, replace=False)
            runs[m][f"u{u}"] = {f"i{i}": float(5 - r) for r, i in enumerate(items)}
    recs = pl.DataFrame(
        [(m, u, i, s) for m, lists in runs.items() for u, scores in lists.items() for i, s in scores.items()],
        schema=["model", "user_id", "item_id", "score"],
        orient="row",
    )
    truth = pl.DataFrame(truth_rows, schema=["user_id", "item_id", "relevance"], orient="row")
    per_user = recframe.per_user(recs, truth=truth, k=5, metrics=["ndcg"], score="score", by="model", profile="ranx")
    out = by_pair(recframe.compare(per_user, test="paired_t", correction=None), "ndcg@5")
    report = ranx.compare(
        ranx.Qrels(qrels), [ranx.Run(runs[m], name=m) for m in runs], ["ndcg@5"], stat_test="student", max_p=0.05
    )
    for (a, b), row in out.items():
        wtl = report.win_tie_loss[(a, b)]["ndcg@5"]
        assert (row["wins"], row["ties"], row["losses"]) == (wtl["W"], wtl["T"], wtl["L"])


def test_values_equal_in_all_but_the_last_bits_are_ties() -> None:
    """Per-user values can differ in their last bits from run to run (an engine's parallel sums):
    a user whose two values differ only there is a tie, never a win or a loss."""
    per_user = pl.DataFrame(
        {
            "model": ["A", "B"] * 3,
            "user_id": [1, 1, 2, 2, 3, 3],
            "ndcg@10": [0.3, 0.3 + 1e-16, 0.5, 0.25, 0.1, 0.2],
        }
    )
    row = recframe.compare(per_user, by="model", test="paired_t").row(0, named=True)
    assert (row["wins"], row["ties"], row["losses"]) == (1, 1, 1)


# a baseline "Z" and three models over six users in two segments: M one better with equal
# differences in all but the last bits (0.1 on 0.7 - 0.6: d_z null), T differing from Z in the
# last bits only on user 1 (a tie), N with a null and a single user in segment y; ndcg is
# higher-is-better, popularity lower-is-better (wins and losses swap)
Z = [0.6, 0.3, 0.5, 0.2, 0.9, 0.4]
VS_BASELINE = pl.DataFrame(
    {
        "model": ["Z"] * 6 + ["M"] * 6 + ["T"] * 6 + ["N"] * 3,
        "segment": ["x", "x", "x", "y", "y", "y"] * 3 + ["x", "x", "y"],
        "user_id": [1, 2, 3, 4, 5, 6] * 3 + [1, 3, 6],
        "ndcg@10": [*Z, *(z + 0.1 for z in Z), 0.6 + 1e-16, 0.7, 0.25, 0.2, 0.1, 0.5, 0.9, None, 0.4],
        "popularity@10": [*Z, 0.7, 0.2, 0.6, 0.1, 0.8, 0.3, 0.6, 0.7, 0.25, 0.2, 0.1, 0.3, 0.3, 0.5, 0.4],
    }
)


def slow_baseline_reference(frame: pl.DataFrame, keys: list[str], baseline: str) -> dict[tuple, tuple]:
    """Per (other keys, model, metric) against `baseline`: the differences model - baseline per
    user with a value under both, wins/ties/losses counted one by one (a tie: the two values
    within SAME_WITHIN of the larger, or of 1 below 1), d_z = mean(d) / sd(d) (None below two
    pairs or when every d is the same within that tolerance)."""
    import statistics

    out = {}
    rows = frame.rows(named=True)
    for metric in ("ndcg@10", "popularity@10"):
        higher = metric != "popularity@10"
        strata = {tuple(r[k] for k in keys[1:]) for r in rows}
        for stratum in strata:

            def values(model: str, metric: str = metric, stratum: tuple = stratum) -> dict:
                return {
                    r["user_id"]: r[metric]
                    for r in rows
                    if r["model"] == model and tuple(r[k] for k in keys[1:]) == stratum and r[metric] is not None
                }

            base = values(baseline)
            for model in {r["model"] for r in rows} - {baseline}:
                mine = values(model)
                users = [u for u in base if u in mine]
                d = [mine[u] - base[u] for u in users]
                tol = [SAME_WITHIN * max(1.0, abs(mine[u]), abs(base[u])) for u in users]
                above = sum(1 for di, t in zip(d, tol) if di > t)
                below = sum(1 for di, t in zip(d, tol) if di < -t)
                wins, losses = (above, below) if higher else (below, above)
                largest = max([1.0, *(abs(v) for u in users for v in (mine[u], base[u]))])
                same = len(d) < 2 or max(d) - min(d) <= SAME_WITHIN * largest
                d_z = None if same else statistics.mean(d) / statistics.stdev(d)
                out[(*stratum, model, metric)] = (d_z, wins, len(d) - above - below, losses)
    return out


@pytest.mark.parametrize("by", [["model"], ["model", "segment"]])
def test_a_baseline_comparison_carries_d_z_wins_ties_and_losses(constructor_or_ibis, by):
    """compare(baseline=) has d_z, wins, ties and losses (issue 59) equal to a slow reference,
    in Python and inside an engine (the paired t test, the one test an engine runs)."""
    pytest.importorskip("scipy", reason="the paired t test needs scipy")
    out = to_polars(recframe.compare(constructor_or_ibis(VS_BASELINE), by=by, baseline="Z", user="user_id"))
    assert out.columns[len(by) - 1 :][11:16] == ["rel_delta", "d_z", "wins", "ties", "losses"]
    want = slow_baseline_reference(VS_BASELINE, by, "Z")
    assert out.height == len(want) == 2 * 3 * (len(by))
    for row in out.iter_rows(named=True):
        d_z, *counts = want[(*(row[k] for k in by[1:]), row["model"], row["metric"])]
        assert [row["wins"], row["ties"], row["losses"]] == counts, row
        assert (row["d_z"] is None) == (d_z is None) and (d_z is None or row["d_z"] == pytest.approx(d_z, rel=1e-9)), row
    # the cases the frame holds: equal differences (d_z null), a tie in the last bits, a single pair
    rows = {(r["model"], r["metric"]): r for r in out.iter_rows(named=True)} if by == ["model"] else {}
    if rows:
        assert rows["M", "ndcg@10"]["d_z"] is None and rows["M", "ndcg@10"]["wins"] == 6
        assert (rows["T", "ndcg@10"]["wins"], rows["T", "ndcg@10"]["ties"], rows["T", "ndcg@10"]["losses"]) == (2, 2, 2)
        # popularity of T - Z: 0, 0.4, -0.25, 0, -0.8, -0.1: lower is better, 3 wins and 1 loss
        assert (rows["T", "popularity@10"]["wins"], rows["T", "popularity@10"]["losses"]) == (3, 1)
        # N - Z on users 1 and 6: d = 0.3, 0; mean 0.15, sd 0.15 sqrt(2)
        assert (rows["N", "ndcg@10"]["n_pairs"], rows["N", "ndcg@10"]["d_z"]) == (2, pytest.approx(2**-0.5))


@pytest.mark.parametrize("test", ["paired_t", "wilcoxon"])
def test_the_baseline_rows_are_the_pairs_with_the_baseline(constructor, test):
    """compare(baseline=) is the all-pairs comparison's pairs (model, baseline), renamed: the
    baseline Z sorts last, so each of its pairs is (model, Z) there too."""
    pytest.importorskip("scipy", reason="the paired tests need scipy")
    frame = VS_BASELINE.filter(pl.col("model") != "N")  # every pair needs a user in common
    if type(constructor(frame)).__module__.split(".")[0] == "duckdb":
        frame = constructor(frame)
        with pytest.raises(RecframeError, match="per_user_frame is a DuckDB frame"):
            recframe.compare(frame, user="user_id", test=test)
        return
    kwargs = {"user": "user_id", "test": test, "correction": None, "seed": 0}
    base = to_polars(recframe.compare(constructor(frame), baseline="Z", **kwargs))
    pairs = to_polars(recframe.compare(constructor(frame), **kwargs)).filter(pl.col("model_b") == "Z")
    renamed = {"model_a": "model", "model_b": "baseline", "n_dropped_a": "n_dropped_model",
               "n_dropped_b": "n_dropped_baseline", "mean_a": "model_mean", "mean_b": "baseline_mean"}  # fmt: skip
    assert set(base.columns) == set(pairs.rename(renamed).columns)  # every column of a pair, d_z and wins included
    columns = [c for c in base.columns if c not in ("delta_lo", "delta_hi")] if test != "paired_t" else base.columns
    # (the bootstrap interval of wilcoxon draws from one generator in another order)
    assert_frame_equal(base.select(columns), pairs.rename(renamed).select(columns))
