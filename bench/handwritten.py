"""The query an expert would write by hand for recframe's default summary, on each engine.

``summary(frame, k=K, relevance=..., threshold=T)`` (by ``by`` keys) gives, over the users with a
relevant item: n_users and the means of precision@K, recall@K, f1@K, hit_rate@K, r_precision,
r_precision@K, ap@K, rr@K, dcg@K and ndcg@K. The obvious hand-written shape, used here on every
engine (bench/engines.py checks each against recframe to 1e-9 before it times it):

- keep the relevant rows (relevance >= T);
- number them by rank per user (the AP numerator), by grade descending per user (the ideal
  DCG), and count them per user (R);
- one GROUP BY user of conditional sums: hits, DCG, IDCG, the AP sum, the first relevant rank,
  the R-precision hits;
- average over users (by the ``by`` keys).

With ``score=`` and ``truth=`` (the "split" case) the recommendations are first ranked by score
(descending, ties by item ascending: ``row_number``) and full-joined with the truth on
(user, item). The hand-written queries check nothing: recframe's calls run every default
data check.
"""

from __future__ import annotations

from typing import Any

METRICS = (
    "precision@{k}",
    "recall@{k}",
    "f1@{k}",
    "hit_rate@{k}",
    "r_precision",
    "r_precision@{k}",
    "ap@{k}",
    "rr@{k}",
    "dcg@{k}",
    "ndcg@{k}",
)


def columns(k: int, by: list[str]) -> list[str]:
    """The output columns both recframe and the hand-written queries are compared on."""
    return [*by, "n_users", *(m.format(k=k) for m in METRICS)]


# ---------------------------------------------------------------------------- SQL (DuckDB, Spark, Ibis)


def sql(
    source: str, by: list[str], k: int, threshold: float, split: tuple[str, str] | None = None, checks: str | None = None
) -> str:
    """The query as SQL over `source` (a table or ``read_parquet(...)``); with `split`, over the
    (recs, truth) sources ranked and joined. With `checks` (the dialect: "duckdb" or "spark";
    not with `split`) it also runs recframe's default data checks (see :func:`checks_sql`) and
    returns two more columns, ``problems`` and ``n_no_truth``."""
    keys = ", ".join([*by, "user_id"])
    if split is None:
        base = f"SELECT {keys}, {'item_id, ' if checks else ''}rank, relevance FROM {source}"
    else:
        recs, truth = split
        base = (
            "SELECT coalesce(r.user_id, t.user_id) AS user_id, r.rank, t.rating AS relevance FROM "
            "(SELECT user_id, item_id, row_number() OVER (PARTITION BY user_id ORDER BY score DESC, item_id ASC) AS rank "
            f"FROM {recs}) r FULL JOIN {truth} t ON r.user_id = t.user_id AND r.item_id = t.item_id"
        )
    # doubles, not decimal literals (Spark averages 1.0 as a decimal of 5 digits)
    one, zero = "CAST(1 AS DOUBLE)", "CAST(0 AS DOUBLE)"
    p, r = f"hits / CAST({k} AS DOUBLE)", "hits / R"
    group = ", ".join(by)
    text = f"""
WITH rel AS (
  SELECT {keys}, rank, relevance,
    row_number() OVER (PARTITION BY {keys} ORDER BY rank ASC NULLS LAST) AS pos_rel,
    row_number() OVER (PARTITION BY {keys} ORDER BY relevance DESC) AS ideal,
    count(*) OVER (PARTITION BY {keys}) AS R
  FROM ({base}) AS base WHERE relevance >= {threshold}
),
per AS (
  SELECT {keys}, CAST(max(R) AS DOUBLE) AS R,
    CAST(sum(CASE WHEN rank <= {k} THEN 1 ELSE 0 END) AS DOUBLE) AS hits,
    sum(CASE WHEN rank <= {k} THEN relevance / log2(rank + 1) ELSE 0 END) AS dcg,
    sum(CASE WHEN ideal <= {k} THEN relevance / log2(ideal + 1) ELSE 0 END) AS idcg,
    sum(CASE WHEN rank <= {k} THEN CAST(pos_rel AS DOUBLE) / rank ELSE 0 END) AS apsum,
    min(rank) AS first,
    CAST(sum(CASE WHEN rank <= R THEN 1 ELSE 0 END) AS DOUBLE) AS rhits,
    CAST(sum(CASE WHEN rank <= least({k}, R) THEN 1 ELSE 0 END) AS DOUBLE) AS rhits_k
  FROM rel GROUP BY {keys}
)
SELECT {group + ", " if by else ""}count(*) AS n_users,
  avg({p}) AS "precision@{k}", avg({r}) AS "recall@{k}",
  avg(CASE WHEN hits = 0 THEN {zero} ELSE 2 * ({p}) * ({r}) / (({p}) + ({r})) END) AS "f1@{k}",
  avg(CASE WHEN hits > 0 THEN {one} ELSE {zero} END) AS "hit_rate@{k}",
  avg(rhits / R) AS r_precision, avg(rhits_k / least({k}, R)) AS "r_precision@{k}",
  avg(apsum / least({k}, R)) AS "ap@{k}",
  avg(CASE WHEN first <= {k} THEN {one} / first ELSE {zero} END) AS "rr@{k}",
  avg(dcg) AS "dcg@{k}", avg(dcg / idcg) AS "ndcg@{k}"
FROM per {"GROUP BY " + group if by else ""}
"""
    if checks is None:
        return text
    assert split is None, "the checked query is written for one long frame"
    means, problems = text.strip(), checks_sql(base, by, k, threshold, checks)
    pair = f"JOIN ({problems}) AS c USING ({group})" if by else f"CROSS JOIN ({problems}) AS c"
    return f"SELECT m.*, c.problems, c.n_no_truth FROM ({means}) AS m {pair}"


def checks_sql(base: str, by: list[str], k: int, threshold: float, dialect: str) -> str:
    """recframe's default data checks of the long frame, hand-written: per list, the facts of
    every row (ranked and judged rows, null items, the lowest and highest rank, NaN or infinite
    grades) and the duplicate counts over the rows that can change a number (relevant or ranked
    within k: rows, distinct items, ranked rows, distinct ranks); then, per ``by`` group, the
    lists with a problem (``problems``, 0 on clean data) and the lists without a judged row."""
    keys = ", ".join([*by, "user_id"])
    on = " AND ".join(f"f.{c} = d.{c}" for c in [*by, "user_id"])
    bad = "isnan(relevance) OR isinf(relevance)" if dialect == "duckdb" else "isnan(relevance) OR abs(relevance) = double('inf')"
    group = ", ".join(f"f.{c}" for c in by)
    problem = (
        "f.n_items < f.n_rows OR d.items < d.n OR d.ranks < d.ranked OR f.min_rank < 1 OR f.bad > 0 OR f.max_rank > f.n_ranked"
    )
    return f"""
WITH base AS ({base}),
facts AS (
  SELECT {keys}, count(rank) AS n_ranked, count(relevance) AS n_judged, count(*) AS n_rows, count(item_id) AS n_items,
    min(rank) AS min_rank, max(rank) AS max_rank, sum(CASE WHEN {bad} THEN 1 ELSE 0 END) AS bad
  FROM base GROUP BY {keys}
),
dups AS (
  SELECT {keys}, count(*) AS n, count(DISTINCT item_id) AS items, count(rank) AS ranked, count(DISTINCT rank) AS ranks
  FROM base WHERE relevance >= {threshold} OR rank <= {k} GROUP BY {keys}
)
SELECT {group + ", " if by else ""}CAST(sum(CASE WHEN {problem} THEN 1 ELSE 0 END) AS BIGINT) AS problems,
  CAST(sum(CASE WHEN f.n_judged = 0 THEN 1 ELSE 0 END) AS BIGINT) AS n_no_truth
FROM facts f LEFT JOIN dups d ON {on} {"GROUP BY " + group if by else ""}
"""


def spark_sql(text: str) -> str:
    """The same SQL in Spark's dialect (backticks, not double quotes, name a column)."""
    return text.replace('"', "`")


# ---------------------------------------------------------------------------- Polars


def polars(lf: Any, by: list[str], k: int, threshold: float, checks: bool = False) -> Any:
    """The query as a Polars plan over a (long) LazyFrame; collect it with the engine wanted.
    With `checks`, it also runs recframe's default data checks (:func:`polars_checks`) and
    returns two more columns, ``problems`` and ``n_no_truth``."""
    import polars as pl

    keys = [*by, "user_id"]
    rel = lf.filter(pl.col("relevance") >= threshold).with_columns(
        pos_rel=pl.col("rank").rank("ordinal").over(keys),
        ideal=pl.col("relevance").rank("ordinal", descending=True).over(keys),
        R=pl.len().over(keys).cast(pl.Float64),
    )
    hit = (pl.col("rank") <= k).fill_null(False)
    per = rel.group_by(keys).agg(
        pl.col("R").first(),
        hits=hit.sum().cast(pl.Float64),
        dcg=(pl.col("relevance") / (pl.col("rank") + 1).log(2)).filter(hit).sum(),
        idcg=(pl.col("relevance") / (pl.col("ideal") + 1).log(2)).filter(pl.col("ideal") <= k).sum(),
        apsum=(pl.col("pos_rel") / pl.col("rank")).filter(hit).sum(),
        first=pl.col("rank").min(),
        rhits=(pl.col("rank") <= pl.col("R")).fill_null(False).sum().cast(pl.Float64),
        rhits_k=(pl.col("rank") <= pl.min_horizontal(pl.col("R"), k)).fill_null(False).sum().cast(pl.Float64),
    )
    p, r = pl.col("hits") / k, pl.col("hits") / pl.col("R")
    capped = pl.min_horizontal(pl.col("R"), k)
    means = [
        pl.len().alias("n_users"),
        p.mean().alias(f"precision@{k}"),
        r.mean().alias(f"recall@{k}"),
        pl.when(pl.col("hits") > 0).then(2 * p * r / (p + r)).otherwise(0.0).mean().alias(f"f1@{k}"),
        (pl.col("hits") > 0).cast(pl.Float64).mean().alias(f"hit_rate@{k}"),
        (pl.col("rhits") / pl.col("R")).mean().alias("r_precision"),
        (pl.col("rhits_k") / capped).mean().alias(f"r_precision@{k}"),
        (pl.col("apsum") / capped).mean().alias(f"ap@{k}"),
        pl.when(pl.col("first") <= k).then(1 / pl.col("first")).otherwise(0.0).mean().alias(f"rr@{k}"),
        pl.col("dcg").mean().alias(f"dcg@{k}"),
        (pl.col("dcg") / pl.col("idcg")).mean().alias(f"ndcg@{k}"),
    ]
    out = per.group_by(by).agg(means).sort(by) if by else per.select(means)
    if not checks:
        return out
    problems = polars_checks(lf, by, k, threshold)
    return out.join(problems, on=by, how="left").sort(by) if by else out.join(problems, how="cross")


def polars_checks(lf: Any, by: list[str], k: int, threshold: float) -> Any:
    """:func:`checks_sql` in Polars: per list the facts of every row and the duplicate counts
    over the rows that can change a number, then per ``by`` group the lists with a problem
    (``problems``) and the lists without a judged row (``n_no_truth``)."""
    import polars as pl

    keys = [*by, "user_id"]
    rel = pl.col("relevance")
    facts = lf.group_by(keys).agg(
        n_ranked=pl.col("rank").count(),
        n_judged=rel.count(),
        n_rows=pl.len(),
        n_items=pl.col("item_id").count(),
        min_rank=pl.col("rank").min(),
        max_rank=pl.col("rank").max(),
        bad=(rel.is_nan() | rel.is_infinite()).sum(),
    )
    used = lf.filter((rel >= threshold).fill_null(False) | (pl.col("rank") <= k).fill_null(False))
    dups = used.group_by(keys).agg(
        n=pl.len(),
        items=pl.col("item_id").n_unique(),
        ranked=pl.col("rank").count(),
        ranks=pl.col("rank").drop_nulls().n_unique(),
    )
    problem = (
        (pl.col("n_items") < pl.col("n_rows"))
        | (pl.col("items") < pl.col("n")).fill_null(False)
        | (pl.col("ranks") < pl.col("ranked")).fill_null(False)
        | (pl.col("min_rank") < 1).fill_null(False)
        | (pl.col("bad") > 0)
        | (pl.col("max_rank") > pl.col("n_ranked")).fill_null(False)
    )
    flagged = facts.join(dups, on=keys, how="left")
    sums = [problem.sum().alias("problems"), (pl.col("n_judged") == 0).sum().alias("n_no_truth")]
    return flagged.group_by(by).agg(sums) if by else flagged.select(sums)


def polars_split(recs: Any, truth: Any, k: int, threshold: float) -> Any:
    """The split case in Polars: rank by score, full join with the truth, then :func:`polars`."""
    import polars as pl

    ranked = recs.with_columns(
        rank=pl.struct((-pl.col("score")).alias("s"), pl.col("item_id").alias("i")).rank("ordinal").over("user_id")
    )
    joined = ranked.join(truth, on=["user_id", "item_id"], how="full", coalesce=True)
    return polars(joined.select("user_id", "rank", pl.col("rating").alias("relevance")), [], k, threshold)


# ---------------------------------------------------------------------------- Polars, issue 26

FAIRNESS = ("aclt@{k}", "miscalibration@{k}", "calibration_js@{k}", "pop_rsp@{k}", "pop_reo@{k}", "exposure_disparity@{k}")


def polars_fairness(
    lf: Any, train: Any, items: Any, group: str, k: int, threshold: float, head_share: float = 0.2, alpha: float = 0.01
) -> list[Any]:
    """The default summary's means (:func:`polars`) and the fairness metrics of
    ``summary(frame, k=k, metrics=[...default, "aclt", "miscalibration", "calibration_js",
    "pop_rsp", "pop_reo", "exposure_disparity"], item_group=group, train=train, items=items)``
    over a long LazyFrame whose every user has a relevant and a recommended item, every item
    in ``items`` (one item group per item): the plans to ``pl.collect_all``, the default means
    first, then one row of the six fairness means. Written as an expert would for these
    numbers alone: one join of the top-k and relevant rows with the catalog (its group and
    head flag), the training mix per (user, group), sums per (user, group) and per group."""
    import polars as pl

    # the head: the most popular items (distinct training users) until head_share of the pairs
    pairs = train.unique()
    popularity = pairs.group_by("item_id").agg(popularity=pl.len())
    levels = popularity.group_by("popularity").agg(level=pl.col("popularity").sum()).sort("popularity", descending=True)
    levels = levels.with_columns(before=pl.col("level").cum_sum() - pl.col("level"), total=pl.col("level").sum())
    head = popularity.join(levels.filter(pl.col("before") < head_share * pl.col("total")), on="popularity", how="semi")
    catalog = items.select("item_id", pl.col(group).alias("g")).join(
        head.select("item_id", in_head=pl.lit(1)), on="item_id", how="left"
    )
    top = (pl.col("rank") <= k).fill_null(False)
    relevant = (pl.col("relevance") >= threshold).fill_null(False)
    rows = lf.filter(top | relevant).join(catalog, on="item_id", how="left").with_columns(top=top, relevant=relevant)
    rows = rows.cache()
    # calibration: the user's training mix p, the top-k mix q, per (user, group)
    p = pairs.join(catalog.select("item_id", "g"), on="item_id").group_by("user_id", "g").agg(t=pl.len())
    p = p.with_columns(p=pl.col("t") / pl.col("t").sum().over("user_id"))
    q = rows.filter("top").group_by("user_id", "g").agg(q=pl.len())
    q = q.with_columns(q=pl.col("q") / pl.col("q").sum().over("user_id"))
    both = q.join(p.select("user_id", "g", "p"), on=["user_id", "g"], how="full", coalesce=True).with_columns(
        pl.col("p").fill_null(0.0), pl.col("q").fill_null(0.0)
    )
    pv, qv, m = pl.col("p"), pl.col("q"), (pl.col("p") + pl.col("q")) / 2
    # a user without training items in the catalog has no mix p: left out of the mean
    per_user = (
        both.join(p.select("user_id").unique(), on="user_id", how="semi")
        .group_by("user_id")
        .agg(
            kl=pl.when(pv > 0).then(pv * (pv / ((1 - alpha) * qv + alpha * pv)).log()).otherwise(0.0).sum(),
            js=(
                pl.when(pv > 0).then(pv * (pv / m).log(2)).otherwise(0.0)
                + pl.when(qv > 0).then(qv * (qv / m).log(2)).otherwise(0.0)
            ).sum()
            / 2,
        )
    )
    aclt = rows.filter("top").group_by("user_id").agg(aclt=pl.col("in_head").is_null().sum())
    # per item group: slots, exposure, hits and relevant items of the lists; |g|; the training
    # pairs of the served users (every user here) in g
    per_group = rows.group_by("g").agg(
        slots=pl.col("top").sum(),
        exposure=(1 / (pl.col("rank") + 1).log(2)).filter("top").sum(),
        hits=(pl.col("top") & pl.col("relevant")).sum(),
        relevant=pl.col("relevant").sum(),
    )
    sizes = catalog.group_by("g").agg(size=pl.len())
    trained = p.group_by("g").agg(t=pl.col("t").sum())
    n_served = rows.filter("top").select(pl.col("user_id").n_unique().alias("users"))
    groups = sizes.join(per_group, on="g", how="left").join(trained, on="g", how="left").join(n_served, how="cross")
    # (as floats: users x |g| overflows the 32-bit counts)
    groups = groups.with_columns(
        pl.col("slots", "exposure", "hits", "relevant", "t", "size", "users").fill_null(0).cast(pl.Float64)
    )
    rsp = pl.col("slots") / (pl.col("users") * pl.col("size") - pl.col("t"))
    reo = pl.col("hits") / pl.col("relevant")
    disparity = (pl.col("exposure") / pl.col("exposure").sum()) / (pl.col("relevant") / pl.col("relevant").sum())
    spread = groups.select(
        (rsp.std(ddof=0) / rsp.mean()).alias(f"pop_rsp@{k}"),
        (reo.std(ddof=0) / reo.mean()).alias(f"pop_reo@{k}"),
        (disparity.max() / disparity.min()).alias(f"exposure_disparity@{k}"),
    )
    means = aclt.select(pl.col("aclt").cast(pl.Float64).mean().alias(f"aclt@{k}")).join(
        per_user.select(pl.col("kl").mean().alias(f"miscalibration@{k}"), pl.col("js").mean().alias(f"calibration_js@{k}")),
        how="cross",
    )
    return [polars(lf, [], k, threshold), means.join(spread, how="cross")]
