"""The evaluation plan, written once in narwhals expressions.

Shape of the plan (design.md section 4):

1. ``prepare``: rename the user's columns to internal names, join ``truth=``, derive ranks from
   scores, flag relevant rows and compute their gain.
2. ``user_table``: one row per (by keys, user) over *all* rows: the relevant count R, the list
   length within each k (for ``precision_denominator="retrieved"``) and the data-check counts.
3. ``relevant_terms``: the relevant rows only (every metric here depends on nothing else), with
   per-row terms built by ``with_columns`` and windows ordered explicitly; then plain sums.
4. ``finish``: join 3 onto 2, finish each metric from its terms, apply the empty-user policy.

Portability rules kept throughout (``notes-narwhals.md``): conditionals only in
``with_columns``, plain column aggregations inside ``group_by().agg()``, windows only with
``order_by`` and only on the prefiltered rows, null ranks replaced by a sentinel before any
comparison, explicit output dtypes and an explicit final sort.
"""

from __future__ import annotations

from collections.abc import Callable

import narwhals as nw

from recframe import _validate as v
from recframe.metrics import REGISTRY, term
from recframe.metrics._registry import NOT_RANKED, discount, position_cut

# the largest finite float32
FLOAT32_MAX = 3.4028234663852886e38
GAIN = "__rf_gain"
POS = "__rf_pos"
IDEAL_POS = "__rf_ideal_pos"
ONE = "__rf_one"
COUNTED = "__rf_counted"
GROUP = "__rf_group"


def needed_terms(spec: v.Spec) -> set[str]:
    terms: set[str] = {"n_relevant"}
    for name in spec.selection.metrics:
        terms.update(REGISTRY[name].terms(spec.conventions))
    return terms


def _renamed_ids(frame: nw.LazyFrame, spec: v.Spec, keys: list[str]) -> list[nw.Expr]:
    """`keys`, then the user and item columns of `frame` under their internal names."""
    user = nw.col(spec.columns.user).alias(v.USER) if spec.columns.user is not None else nw.lit(0).alias(v.USER)
    return [*(nw.col(b) for b in keys), user, nw.col(spec.columns.item).alias(v.ITEM)]


def prepare(
    frame: nw.LazyFrame,
    truth: nw.LazyFrame | None,
    spec: v.Spec,
    users: nw.LazyFrame | None = None,
    exclude: nw.LazyFrame | None = None,
) -> nw.LazyFrame:
    """Select and rename the needed columns; drop excluded pairs; join truth; rank the lists."""
    keys = list(spec.columns.list_keys)
    order_col = v.SCORE if spec.columns.score is not None else v.RANK
    order_src = spec.columns.score if spec.columns.score is not None else spec.columns.rank
    assert order_src is not None  # check_arguments requires rank= or score=
    recs = [*_renamed_ids(frame, spec, keys), nw.col(order_src).alias(order_col)]
    lf = frame.select(*recs) if truth is not None else frame.select(*recs, nw.col(spec.columns.relevance).alias(v.REL))
    if exclude is not None:
        # seen (user, item) pairs leave the lists (and the truth): the lists are re-ranked below
        on = [b for b in keys if b in exclude.columns]
        lf = lf.join(exclude.select(*_renamed_ids(exclude, spec, on)).unique(), on=[*on, v.USER, v.ITEM], how="anti")
    if truth is not None:
        truth_keys = list(spec.columns.truth_keys)
        t = truth.select(*_renamed_ids(truth, spec, truth_keys), nw.col(spec.columns.relevance).alias(v.REL))
        if exclude is not None:
            on = [b for b in truth_keys if b in exclude.columns]
            seen = exclude.select(*_renamed_ids(exclude, spec, on)).unique()
            t = t.join(seen, on=[*on, v.USER, v.ITEM], how="anti")
        if users is not None:
            # users= fixes who is evaluated: the truth of anybody else is left out
            listed = users.select(nw.col(str(spec.columns.user)).alias(v.USER)).unique()  # users= needs user=
            t = t.join(listed, on=v.USER, how="semi")
        if spec.columns.model_keys:
            # every model is scored on every truth user: broadcast truth over the model keys
            # only; truth keys (folds, dates) are joined on, never broadcast across
            t = lf.select(*spec.columns.model_keys).unique().join(t, how="cross")
        on = [*keys, v.USER, v.ITEM]
        lf = lf.join(t, on=on, how="full")
        lf = lf.with_columns(nw.coalesce(nw.col(c), nw.col(f"{c}_right")).alias(c) for c in on)
        lf = lf.drop([f"{c}_right" for c in on])

    lf = lf.with_columns(nw.col(v.REL).cast(nw.Float64))
    if spec.columns.rank is not None:
        r = nw.col(v.RANK)
        if spec.facts.integer_rank:
            lf = lf.with_columns(r.cast(nw.Int64))
        else:
            # float ranks (pandas turns int columns with missing values into float64), decimals
            # and 64-bit unsigned ranks must be whole numbers an Int64 holds exactly (|r| <=
            # 2**53); the bad ones are counted and reported by the data check
            lf = lf.with_columns(r.cast(nw.Float64))
            bad = (r.is_nan() | ~r.is_finite() | (r.round(0) != r) | (r.abs() > v.MAX_RANK_VALUE)).fill_null(False)
            lf = lf.with_columns(bad.cast(nw.Int64).alias(v.BAD_RANK))
            lf = lf.with_columns(nw.when(nw.col(v.BAD_RANK) == 0).then(r).otherwise(None).cast(nw.Int64))
        if spec.reranks:
            # positions 1, 2, 3, ... in the given order; tied ranks stay tied (the duplicate
            # check still sees them) and the given rank is kept for the range check
            lf = lf.with_columns(r.alias(v.RAW_RANK))
            lf = lf.with_columns(r.rank("dense").over(*keys, v.USER).cast(nw.Int64))
    if spec.columns.score is not None:
        score = nw.col(v.SCORE).cast(nw.Float64)
        if spec.conventions.score_dtype == "float32":
            # compare as trec_eval does; scores past float32's range take its largest value
            # (trec_eval reads them as infinite: they tie either way), which no engine refuses
            score = score.clip(-FLOAT32_MAX, FLOAT32_MAX).cast(nw.Float32).cast(nw.Float64)
        lf = lf.with_columns(score)
        eligible = ~nw.col(v.SCORE).is_null() & ~nw.col(v.SCORE).is_nan()
        if spec.selection.score_threshold is not None:
            eligible = eligible & (nw.col(v.SCORE) >= spec.selection.score_threshold)
        # ties are broken by the item's value; Enum/Categorical items by their names (Polars
        # would order them by category, other engines by name)
        item_order = nw.col(v.ITEM).cast(nw.String) if spec.facts.categorical_item else nw.col(v.ITEM)
        lf = lf.with_columns(
            eligible.fill_null(False).cast(nw.Int64).alias(ONE),
            (-nw.col(v.SCORE)).alias("__rf_neg_score"),
            item_order.alias("__rf_item_order"),
        )
        # rank = position by score descending, ties broken by item ascending; counting only
        # eligible rows makes where null scores sort irrelevant
        if spec.conventions.ties == "item_desc":
            # (score, item) descending = a cumulative sum from the end of the ascending order
            position = nw.col(ONE).cum_sum(reverse=True).over(*keys, v.USER, order_by=[v.SCORE, "__rf_item_order"])
        else:
            position = nw.col(ONE).cum_sum().over(*keys, v.USER, order_by=["__rf_neg_score", "__rf_item_order"])
        # (cast: DuckDB sums integers to INT128, which SQLFrame cannot type)
        lf = lf.with_columns(nw.when(nw.col(ONE) == 1).then(position).otherwise(None).cast(nw.Int64).alias(v.RANK))
        lf = lf.drop(ONE, "__rf_neg_score", "__rf_item_order")

    return lf


def is_relevant(spec: v.Spec) -> nw.Expr:
    """relevance >= threshold (or > 0 without one); null relevance is not relevant."""
    rel = nw.col(v.REL)
    return (rel >= spec.selection.threshold if spec.selection.threshold is not None else rel > 0).fill_null(False)


def user_table(lf: nw.LazyFrame, spec: v.Spec, terms: set[str], users: nw.LazyFrame | None = None) -> nw.LazyFrame:
    """One row per list (model and truth keys, user) over all rows: R, retrieved@k, the rows
    with a relevance, the data-check counts and, with users=, the user's rows there."""
    keys = [*spec.columns.list_keys, v.USER]
    rank, rel = nw.col(v.RANK), nw.col(v.REL)
    flags = [
        is_relevant(spec).cast(nw.Int64).alias(term("n_relevant")),
        (rel.is_nan() | ~rel.is_finite()).fill_null(False).cast(nw.Int64).alias(v.BAD_REL),
    ]
    if spec.columns.score is not None:
        flags.append(nw.col(v.SCORE).is_nan().fill_null(False).cast(nw.Int64).alias(v.BAD_SCORE))
    if v.BAD_GAIN in v.check_counts(spec):
        # 2**grade - 1 overflows float64 sums past this grade: refuse rather than give NaN
        flags.append((is_relevant(spec) & (rel > v.MAX_EXP2_GRADE)).fill_null(False).cast(nw.Int64).alias(v.BAD_GAIN))
    if "retrieved@" in terms:
        flags += [
            (rank <= position_cut(k)).fill_null(False).cast(nw.Int64).alias(term("retrieved@", k)) for k in spec.selection.ks
        ]
    # the bad-value flags the check reads (BAD_RANK is set by prepare, for float ranks only)
    sums = [term("n_relevant"), *(c for c in v.check_counts(spec) if c in (v.BAD_REL, v.BAD_SCORE, v.BAD_RANK, v.BAD_GAIN))]
    sums += [term("retrieved@", k) for k in spec.selection.ks if "retrieved@" in terms]
    # the two distinct counts cost more than the rest of the table together: they can be skipped
    distinct = [nw.col(v.ITEM).n_unique().alias(v.N_ITEMS), rank.n_unique().alias(v.N_RANKS)]
    given_rank = nw.col(v.RAW_RANK) if spec.reranks else rank
    counts = v.check_counts(spec)
    table = (
        lf.with_columns(*flags)
        .group_by(keys)
        .agg(
            nw.len().alias(v.N_ROWS),
            nw.col(v.ITEM).count().alias(v.N_ITEMS_SET),
            rank.count().alias(v.N_RANKED),
            rel.count().alias(v.N_JUDGED),
            given_rank.min().alias(v.MIN_RANK),
            *([rank.max().alias(v.MAX_RANK)] if v.MAX_RANK in counts else []),
            *(distinct if spec.selection.check_duplicates else []),
            *(nw.col(c).sum() for c in sums),
        )
    )
    # DuckDB sums integers to INT128, which SQLFrame cannot type: cast back
    table = table.with_columns(nw.col(c).cast(nw.Int64) for c in [*sums, v.N_RANKED, v.N_JUDGED])
    if users is not None:
        listed = (
            users.select(nw.col(str(spec.columns.user)).alias(v.USER), *spec.columns.attr_keys)
            .group_by(v.USER)
            .agg(nw.len().alias(v.USER_ROWS), *(nw.col(a).count().alias(v.attr_count(a)) for a in spec.columns.attr_keys))
        )
        table = table.join(listed, on=v.USER, how="left")
    return table


def relevant_terms(lf: nw.LazyFrame, spec: v.Spec, terms: set[str]) -> tuple[nw.LazyFrame, list[str]]:
    """Per-user sums of the per-row terms, from the relevant rows only, and the term names."""
    keys = [*spec.columns.list_keys, v.USER]
    rel = nw.col(v.REL)
    gain = {"linear": rel, "binary": nw.lit(1.0), "exp2": nw.lit(2.0) ** rel - 1.0}[spec.conventions.gain]
    rows = lf.filter(is_relevant(spec)).select(
        *keys,
        nw.col(v.RANK).cast(nw.Int64).fill_null(NOT_RANKED).alias(v.RANK),
        gain.cast(nw.Float64).alias(GAIN),
        nw.lit(1).cast(nw.Int64).alias(ONE),
    )
    rank, gain = nw.col(v.RANK), nw.col(GAIN)
    windows = []
    if terms & {"hits_r", "hits_capped@"}:
        windows.append(nw.col(ONE).sum().over(*keys).alias("__rf_R"))
    if "ap_sum@" in terms:
        # position among the user's relevant items in rank order = hits up to and including it
        windows.append(nw.col(ONE).cum_sum().over(*keys, order_by=v.RANK).alias(POS))
    if "idcg@" in terms:
        windows.append(gain.rank("ordinal", descending=True).over(*keys).alias(IDEAL_POS))
    if windows:
        rows = rows.with_columns(*windows)
    R = nw.col("__rf_R")

    def at(k: int | nw.Expr, value: nw.Expr | float, position: nw.Expr = rank) -> nw.Expr:
        return nw.when(position <= (position_cut(k) if isinstance(k, int) else k)).then(value).otherwise(0.0)

    cols: dict[str, nw.Expr] = {term("hits@", k): at(k, 1.0) for k in spec.selection.ks}
    if "hits_r" in terms:
        cols[term("hits_r")] = at(R, 1.0)
    for k in spec.selection.ks:
        if "hits_capped@" in terms:
            cols[term("hits_capped@", k)] = at(nw.min_horizontal(R, nw.lit(k)), 1.0)
        if "ap_sum@" in terms:
            cols[term("ap_sum@", k)] = at(k, nw.col(POS) / rank)
        if "dcg@" in terms:
            cols[term("dcg@", k)] = at(k, gain / discount(rank, spec.conventions.discount))
        if "idcg@" in terms:
            ideal = nw.col(IDEAL_POS)
            cols[term("idcg@", k)] = at(k, gain / discount(ideal, spec.conventions.discount), ideal)
    rows = rows.with_columns(expr.alias(name) for name, expr in cols.items())
    sums = rows.group_by(keys).agg(*(nw.col(c).sum() for c in cols), rank.min().alias(term("min_rank")))
    return sums, [*cols, term("min_rank")]


def metric_columns(spec: v.Spec) -> list[tuple[str, str, int | None]]:
    """(output column, metric name, k) in output order."""
    out: list[tuple[str, str, int | None]] = []
    for name in spec.selection.metrics:
        metric = REGISTRY[name]
        if metric.bare:
            out.append((name, name, None))
        if name not in spec.selection.no_cutoff:
            out += [(f"{name}@{k}", name, k) for k in spec.selection.ks]
    return out


def per_user_plan(
    frame: nw.LazyFrame,
    truth: nw.LazyFrame | None,
    spec: v.Spec,
    check: Callable[[nw.LazyFrame], nw.LazyFrame],
    users: nw.LazyFrame | None = None,
    exclude: nw.LazyFrame | None = None,
) -> nw.LazyFrame:
    """The per-user frame, with internal key names, unsorted: by..., user, n_relevant, metrics,
    then the list facts N_RANKED and N_JUDGED that :func:`summary_plan` counts users by.

    `check` receives the per-user table with the data-check counts and returns it (it raises,
    now or when the plan runs, on bad data). Lists of users with nothing recommended that every
    metric skips (``unranked_users="skip"``) are still here: :func:`per_user_rows` drops them.
    """
    keys = [*spec.columns.list_keys, v.USER]
    terms = needed_terms(spec)
    lf = prepare(frame, truth, spec, users, exclude)
    table = check(user_table(lf, spec, terms, users))
    if spec.facts.with_users:
        # users= fixes who is evaluated (recommended users it lacks were refused or dropped)
        table = table.filter(~nw.col(v.USER_ROWS).is_null())
    # unranked_users="skip", as trec_eval: a user with nothing recommended is not evaluated;
    # when only some metrics skip them (a profile's per-metric option) they get null there
    skip_all = set(spec.selection.unranked_skip) >= set(spec.selection.metrics)
    table = table.drop(*(c for c in v.check_counts(spec) if c != v.N_RANKED))
    sums, term_cols = relevant_terms(lf, spec, terms)
    joined = table.join(sums, on=keys, how="left")
    # users without relevant rows have no sums: 0, and a first relevant rank past every k
    joined = joined.with_columns(nw.col(c).fill_null(NOT_RANKED if c == term("min_rank") else 0) for c in term_cols)
    has_rel = nw.col(term("n_relevant")) > 0
    outputs = []
    for column, name, k in metric_columns(spec):
        metric = REGISTRY[name]
        value = metric.finish(k, spec.conventions)
        if spec.conventions.empty_users == "zero" or metric.zero_when_empty:
            value = nw.when(has_rel).then(value).otherwise(0.0)
        else:
            value = nw.when(has_rel).then(value).otherwise(None)
        if name in spec.selection.unranked_skip and not skip_all:
            value = nw.when(nw.col(v.N_RANKED) > 0).then(value).otherwise(None)
        outputs.append(value.cast(nw.Float64).alias(column))
    out = joined.select(
        *keys,
        nw.col(term("n_relevant")).cast(nw.Int64).alias("n_relevant"),
        *outputs,
        nw.col(v.N_RANKED),
        nw.col(v.N_JUDGED),
    )
    if spec.columns.attr_keys:
        # user attributes (segment, cohort) from users=, one row per user (checked)
        assert users is not None  # attribute keys come from users=
        attrs = users.select(nw.col(str(spec.columns.user)).alias(v.USER), *spec.columns.attr_keys)
        out = out.join(attrs, on=v.USER, how="left")
        out = out.select(*spec.columns.by, *(c for c in out.columns if c not in spec.columns.by))
    return out


def per_user_rows(plan: nw.LazyFrame, spec: v.Spec) -> nw.LazyFrame:
    """The public per-user frame: lists every metric skips left out, list facts dropped."""
    if set(spec.selection.unranked_skip) >= set(spec.selection.metrics):
        plan = plan.filter(nw.col(v.N_RANKED) > 0)
    return plan.drop(v.N_RANKED, v.N_JUDGED)


def counted_value(spec: v.Spec, column: str, name: str) -> nw.Expr:
    """The metric column where the list counts for metric `name`, else null (see summary_plan)."""
    base = nw.col("n_relevant") > 0 if spec.conventions.empty_users == "skip" else nw.lit(True)
    if name in spec.selection.unranked_skip:
        base = base & (nw.col(v.N_RANKED) > 0)
    return nw.when(base).then(nw.col(column)).otherwise(None).alias(column)


#: The floor trec_eval puts under a value before its log in a geometric mean (gm_map, gm_bpref):
#: a user scoring 0 pulls the mean down without making it 0.
GMEAN_FLOOR = 1e-5


def summary_plan(per_user: nw.LazyFrame, spec: v.Spec, aggregate: str = "mean") -> nw.LazyFrame:
    """Means over counted users, by group: by..., the counts, metrics.

    ``per_user`` is :func:`per_user_plan`'s frame, list facts included. A list is counted by a
    metric unless its user has no relevant item (``empty_users="skip"``) or nothing
    recommended (``unranked_users="skip"`` for that metric). ``n_users`` counts the lists every
    metric counts; where a metric counts more (a profile's per-metric rule), its own count is
    ``n_users_<metric>``. ``n_skipped`` is the other lists; ``n_unranked``, ``n_no_relevant``
    and ``n_no_truth`` say what the users of the group lacked, counted or not.
    """
    columns = metric_columns(spec)
    metric_cols = [c for c, _, _ in columns]
    has_rel = nw.col("n_relevant") > 0
    ranked = nw.col(v.N_RANKED) > 0
    base = has_rel if spec.conventions.empty_users == "skip" else nw.lit(True)
    counted_all = base & ranked if spec.selection.unranked_skip else base
    own = [m for m in spec.selection.metrics if spec.selection.unranked_skip and m not in spec.selection.unranked_skip]
    # an empty `by` still groups (on a constant) so that an empty input gives an empty summary
    keys = list(spec.columns.by) or [GROUP]
    lf = per_user.with_columns(
        counted_all.cast(nw.Int64).alias(COUNTED),
        *((base.cast(nw.Int64)).alias(f"__rf_counted:{m}") for m in own),
        (has_rel & ~ranked).cast(nw.Int64).alias("__rf_unranked"),
        ((nw.col(v.N_JUDGED) > 0) & ~has_rel).cast(nw.Int64).alias("__rf_no_relevant"),
        (nw.col(v.N_JUDGED) == 0).cast(nw.Int64).alias("__rf_no_truth"),
        *(counted_value(spec, c, name) for c, name, _ in columns),
        *([] if spec.columns.by else [nw.lit(0).alias(GROUP)]),
    )
    if aggregate == "gmean":
        # exp(mean(log(max(value, floor)))): the mean of the logs, exponentiated below
        lf = lf.with_columns(nw.col(c).clip(lower_bound=GMEAN_FLOOR).log() for c in metric_cols)
    agg = lf.group_by(keys).agg(
        nw.col(COUNTED).sum().alias("n_users"),
        *(nw.col(f"__rf_counted:{m}").sum().alias(f"n_users_{m}") for m in own),
        nw.len().alias("__rf_n_lists"),
        nw.col("__rf_unranked").sum().alias("n_unranked"),
        nw.col("__rf_no_relevant").sum().alias("n_no_relevant"),
        nw.col("__rf_no_truth").sum().alias("n_no_truth"),
        *(nw.col(c).mean() for c in metric_cols),
    )
    out = agg.select(
        *keys,
        nw.col("n_users").cast(nw.Int64),
        *(nw.col(f"n_users_{m}").cast(nw.Int64) for m in own),
        (nw.col("__rf_n_lists") - nw.col("n_users")).cast(nw.Int64).alias("n_skipped"),
        *(nw.col(c).cast(nw.Int64) for c in ("n_unranked", "n_no_relevant", "n_no_truth")),
        *((nw.col(c).exp() if aggregate == "gmean" else nw.col(c)).cast(nw.Float64) for c in metric_cols),
    ).sort(keys)
    return out if spec.columns.by else out.drop(GROUP)
