"""A slow, obvious reference implementation of recframe's metrics, for property tests.

Plain Python loops over each user's list, written from the definitions in the docstring of
``recframe.per_user`` and not from the engine: if the two agree on random frames, both are
likely right.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

ALL_METRICS = ("precision", "recall", "f1", "hit_rate", "r_precision", "ap", "rr", "dcg", "ndcg")


def build_lists(
    rows: list[dict[str, Any]],
    *,
    user: str | None,
    item: str,
    rank: str,
    score: str | None,
    relevance: str,
    by: tuple[str, ...],
    truth: list[dict[str, Any]] | None,
    score_threshold: float | None,
    truth_keys: tuple[str, ...] = (),
    users: list[dict[str, Any]] | None = None,
    exclude: list[dict[str, Any]] | None = None,
    rank_gaps: str = "keep",
) -> dict[tuple, list[tuple[Any, int | None, float | None]]]:
    """(list keys..., user) -> [(item, rank or None, relevance or None)].

    The list keys are the ``by`` keys that are not users= attributes, in ``by`` order: model
    keys (truth broadcast over them) and ``truth_keys`` (taken from each truth row). users= drops
    every list of a user it does not list; exclude= drops its (keys it has, user, item) rows
    from both frames and re-ranks the lists; ``rank_gaps="rerank"`` re-ranks them too."""
    attrs = set(users[0]) - {user} if users else set()
    list_keys = tuple(b for b in by if b not in attrs)
    model_keys = tuple(b for b in list_keys if b not in truth_keys)
    listed = None if users is None else {u[user] for u in users}

    def seen(r: dict[str, Any], keys: tuple[str, ...]) -> bool:
        if exclude is None:
            return False
        on = [b for b in keys if b in exclude[0]] if exclude else []
        return any(all(e[b] == r[b] for b in on) and e[user] == r[user] and e[item] == r[item] for e in exclude)

    lists: dict[tuple, dict[Any, list]] = defaultdict(dict)
    for r in rows:
        if seen(r, list_keys):
            continue
        key = (*(r[b] for b in list_keys), r[user] if user else None)
        order = r[score] if score else r[rank]
        lists[key][r[item]] = [order, None if truth is not None else r[relevance]]
    if truth is not None:
        # without model keys there is one group even when nothing was recommended
        groups = {tuple(r[b] for b in model_keys) for r in rows if not seen(r, list_keys)} if model_keys else {()}
        for group in groups:
            values = dict(zip(model_keys, group))
            for t in truth:
                if seen(t, truth_keys) or (listed is not None and t[user] not in listed):
                    continue
                key = (*(values[b] if b in values else t[b] for b in list_keys), t[user] if user else None)
                entry = lists[key].setdefault(t[item], [None, None])
                entry[1] = t[relevance]
    if listed is not None:
        lists = defaultdict(dict, {key: items for key, items in lists.items() if key[-1] in listed})
    out = {}
    for key, items in lists.items():
        if score:
            eligible = [
                (it, s)
                for it, (s, _) in items.items()
                if s is not None and not math.isnan(s) and (score_threshold is None or s >= score_threshold)
            ]
            eligible.sort(key=lambda pair: (-pair[1], pair[0]))
            ranks = {it: pos for pos, (it, _) in enumerate(eligible, start=1)}
            out[key] = [(it, ranks.get(it), rel) for it, (_, rel) in items.items()]
        else:
            given = {it: None if o is None else int(o) for it, (o, _) in items.items()}
            if rank_gaps == "rerank" or exclude is not None:
                dense = {r: pos for pos, r in enumerate(sorted({r for r in given.values() if r is not None}), start=1)}
                given = {it: None if r is None else dense[r] for it, r in given.items()}
            out[key] = [(it, given[it], rel) for it, (_, rel) in items.items()]
    return out


def metrics_of_list(
    entries: list[tuple[Any, int | None, float | None]],
    ks: tuple[int, ...],
    metrics: tuple[str, ...] = ALL_METRICS,
    *,
    threshold: float | None = None,
    precision_denominator: str = "k",
    recall_denominator: str = "relevant",
    ap_denominator: str = "min_k_relevant",
    gain: str = "linear",
    empty_users: str = "skip",
) -> dict[str, Any]:
    def is_relevant(rel: float | None) -> bool:
        if rel is None:
            return False
        return rel >= threshold if threshold is not None else rel > 0

    def gain_of(rel: float) -> float:
        if gain == "exp2":
            return 2.0**rel - 1.0
        return rel if gain == "linear" else 1.0

    relevant = [(r, rel) for _, r, rel in entries if is_relevant(rel)]
    ranked = sorted((r, rel) for _, r, rel in entries if r is not None)  # the list, top first
    R = len(relevant)
    rel_at = {r: rel for r, rel in ranked}

    def hits(cut: int) -> int:
        return sum(1 for r, _ in relevant if r is not None and r <= cut)

    # "_" entries are list facts for the summary's counts, not output columns
    out: dict[str, Any] = {
        "n_relevant": R,
        "_ranked": any(r is not None for _, r, _ in entries),
        "_judged": any(rel is not None for _, _, rel in entries),
    }
    for name in metrics:
        cuts: list[int | None] = [None, *ks] if name == "r_precision" else list(ks)
        for k in cuts:
            column = name if k is None else f"{name}@{k}"
            if R == 0:
                # "skip": left out of the means, so null here too (per_user's mean = summary's)
                out[column] = 0.0 if empty_users == "zero" else None
                continue
            if name == "precision":
                if precision_denominator == "k":
                    value = hits(k) / k
                else:
                    retrieved = sum(1 for r, _ in ranked if r <= k)
                    value = hits(k) / retrieved if retrieved else 0.0
            elif name == "recall":
                value = hits(k) / (R if recall_denominator == "relevant" else min(k, R))
            elif name == "f1":
                p = out.get(f"precision@{k}")
                if p is None or "precision" not in metrics:
                    retrieved = sum(1 for r, _ in ranked if r <= k)
                    denom = k if precision_denominator == "k" else max(retrieved, 1)
                    p = hits(k) / denom
                rcl = hits(k) / (R if recall_denominator == "relevant" else min(k, R))
                value = 2 * p * rcl / (p + rcl) if p + rcl > 0 else 0.0
            elif name == "hit_rate":
                value = 1.0 if hits(k) > 0 else 0.0
            elif name == "r_precision":
                s = R if k is None else min(k, R)
                value = hits(s) / s
            elif name == "ap":
                total, found = 0.0, 0
                for r, rel in ranked:
                    if r > k:
                        break
                    if is_relevant(rel):
                        found += 1
                        total += found / r
                denom = {"min_k_relevant": min(k, R), "relevant": R, "hits": found, "k": k}[ap_denominator]
                value = total / denom if denom else 0.0
            elif name == "rr":
                first = min((r for r, _ in relevant if r is not None), default=None)
                value = 1.0 / first if first is not None and first <= k else 0.0
            elif name in ("dcg", "ndcg"):
                dcg = sum(gain_of(rel_at[r]) / math.log2(r + 1) for r, _ in ranked if r <= k and is_relevant(rel_at[r]))
                ideal = sorted((gain_of(rel) for _, rel in relevant), reverse=True)[:k]
                idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
                value = dcg if name == "dcg" else dcg / idcg
            out[column] = value
    return out


def per_user(
    rows,
    *,
    k,
    metrics=ALL_METRICS,
    user="user_id",
    item="item_id",
    rank="rank",
    score=None,
    relevance="relevance",
    threshold=None,
    by=(),
    truth=None,
    score_threshold=None,
    precision_denominator="k",
    recall_denominator="relevant",
    ap_denominator="min_k_relevant",
    gain="linear",
    empty_users="skip",
    truth_keys=(),
    users=None,
    exclude=None,
    rank_gaps="keep",
    unlisted_users="drop",
) -> dict[tuple, dict[str, Any]]:
    """(by..., user) -> {"n_relevant": R, "<metric>@<k>": value, ...}; rows are dicts.

    users= attributes named in ``by`` are looked up per user; the keys of the result follow
    ``by``'s order. Only ``unlisted_users="drop"`` is modelled."""
    assert unlisted_users == "drop"
    ks = tuple(k) if isinstance(k, (list, tuple)) else (k,)
    lists = build_lists(
        rows,
        user=user,
        item=item,
        rank=rank,
        score=score,
        relevance=relevance,
        by=tuple(by),
        truth=truth,
        score_threshold=score_threshold,
        truth_keys=tuple(truth_keys),
        users=users,
        exclude=exclude,
        rank_gaps=rank_gaps,
    )
    attrs = {u[user]: u for u in users} if users else {}
    list_keys = [b for b in by if not (users and b in users[0] and b != user)]
    out = {}
    for key, entries in lists.items():
        values = dict(zip(list_keys, key[:-1]))
        full = (*(values[b] if b in values else attrs[key[-1]][b] for b in by), key[-1])
        out[full] = metrics_of_list(
            entries,
            ks,
            tuple(metrics),
            threshold=threshold,
            precision_denominator=precision_denominator,
            recall_denominator=recall_denominator,
            ap_denominator=ap_denominator,
            gain=gain,
            empty_users=empty_users,
        )
    return out


def summary(per_user_values: dict[tuple, dict[str, Any]], n_by: int, empty_users: str = "skip") -> dict[tuple, dict[str, Any]]:
    """(by...) -> {the counts, mean of each metric over counted users}."""
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for key, values in per_user_values.items():
        groups[key[:n_by]].append(values)
    out = {}
    for group, users in groups.items():
        counted = [u for u in users if empty_users != "skip" or u["n_relevant"] > 0]
        row: dict[str, Any] = {
            "n_users": len(counted),
            "n_skipped": len(users) - len(counted),
            "n_unranked": sum(1 for u in users if u["n_relevant"] > 0 and not u["_ranked"]),
            "n_no_relevant": sum(1 for u in users if u["_judged"] and u["n_relevant"] == 0),
            "n_no_truth": sum(1 for u in users if not u["_judged"]),
        }
        for column in users[0]:
            if column == "n_relevant" or column.startswith("_"):
                continue
            row[column] = sum(u[column] for u in counted) / len(counted) if counted else None
        out[group] = row
    return out


# ------------------------------------------------------------------------- beyond accuracy

BEYOND_USER = (
    "novelty",
    "popularity",
    "long_tail",
    "aclt",
    "ild",
    "category_diversity",
    "intersection",
    "unexpectedness",
    "serendipity",
)
BEYOND_GROUP = ("catalog_coverage", "user_coverage", "user_coverage_full", "gini", "entropy", "personalization")


def head_items(popularity: dict[Any, int], head_share: float) -> set[Any]:
    """Walk the items by decreasing popularity; an item is in the head while the items strictly
    more popular than it hold less than head_share of the pairs."""
    total = sum(popularity.values())
    head = set()
    for item, users in popularity.items():
        before = sum(u for u in popularity.values() if u > users)
        if before < head_share * total:
            head.add(item)
    return head


def labels(values: tuple) -> set:
    """An item's label set: each feature's value, or each element of a list feature, tagged
    with the feature's position (the columns pool their labels)."""
    return {(j, x) for j, v in enumerate(values) for x in (v if isinstance(v, (list, tuple)) else [v])}


def distance(a: tuple, b: tuple, kind: str) -> float:
    if kind == "jaccard":
        return 1 - len(labels(a) & labels(b)) / len(labels(a) | labels(b))
    if kind == "cosine":
        dot = sum(x * y for x, y in zip(a, b))
        return 1 - dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))
    return float(sum(x != y for x, y in zip(a, b)))


def beyond(
    lists: dict[tuple, list[Any]],
    train: list[tuple[Any, Any]],
    features: dict[Any, tuple] | None,
    k: int,
    *,
    novelty: str = "self_information",
    popularity: str = "count",
    cold_items: str = "count",
    distance_kind: str = "hamming",
    head_share: float = 0.2,
    baseline: Any = None,
    relevant: dict[tuple, set] | None = None,
) -> tuple[dict[tuple, dict[str, float | None]], dict[Any, dict[str, float | None]]]:
    """Per list ((model, user) -> the items in rank order, [] for a user with nothing
    recommended) and per model: every beyond-accuracy metric at k, from its definition, pair
    by pair. The catalog is `features`' items, else the training items; `relevant` holds each
    list's relevant items (for serendipity). Under ``cold_items="skip"`` novelty and popularity
    read the top k's training items only (None when it has none)."""
    users_of: dict[Any, set] = defaultdict(set)
    for u, i in set(train):
        users_of[i].add(u)
    pop = {i: len(us) for i, us in users_of.items()}
    n_users = len({u for u, _ in train})
    pairs = sum(pop.values())
    head = head_items(pop, head_share)
    catalog = set(features) if features is not None else set(pop)
    per_list: dict[tuple, dict[str, float | None]] = {}
    for (model, user), items in lists.items():
        top = items[:k]
        n = len(top)
        out: dict[str, float | None] = {}
        if n == 0:
            per_list[(model, user)] = dict.fromkeys(BEYOND_USER)
            continue
        # the items novelty and popularity read: every one, or (skip) those in train= only
        read = [i for i in top if i in pop] if cold_items == "skip" else top
        info = [-math.log2(max(pop.get(i, 0), 1) / n_users) for i in read]
        shares = [pop.get(i, 0) / (pairs if popularity == "share" else 1) for i in read]
        if not read:
            out["novelty"] = out["popularity"] = None
        elif novelty == "surprisal":
            out["novelty"] = sum(x / math.log2(n_users) for x in info) / k
        else:
            out["novelty"] = sum(info) / len(read)
        if read:
            out["popularity"] = sum(shares) / len(read)
        out["long_tail"] = sum(i not in head for i in top) / n
        out["aclt"] = float(sum(i not in head for i in top))
        if features is not None:
            dists = [distance(features[a], features[b], distance_kind) for x, a in enumerate(top) for b in top[x + 1 :]]
            out["ild"] = sum(dists) / len(dists) if dists else 0.0
            if any(isinstance(v, (list, tuple)) for i in top for v in features[i]):  # label lists
                out["category_diversity"] = len(set().union(*(labels(features[i]) for i in top))) / k
            else:
                out["category_diversity"] = len({features[i] for i in top}) / k
        if relevant is not None:
            levels = sorted(set(pop.values()), reverse=True)
            place = {i: levels.index(u) + 1 for i, u in pop.items()}  # dense, most popular first
            unexpected = [max(place.get(i, len(catalog) + 1) - r, 0) / len(catalog) for r, i in enumerate(top, 1)]
            out["serendipity"] = sum(u for u, i in zip(unexpected, top) if i in relevant[(model, user)]) / n
        if baseline is not None:
            base = set(lists.get((baseline, user), [])[:k])
            shared = sum(i in base for i in top)
            out["intersection"] = shared / n
            out["unexpectedness"] = 1 - shared / k
        per_list[(model, user)] = out
    per_model: dict[Any, dict[str, float | None]] = {}
    for model in sorted({m for m, _ in lists}):
        tops = [items[:k] for (m, _), items in lists.items() if m == model]
        counts: dict[Any, int] = defaultdict(int)
        for top in tops:
            for i in top:
                counts[i] += 1
        total = sum(counts.values())
        served = [top for top in tops if top]
        g: dict[str, float | None] = {}
        g["catalog_coverage"] = len(counts) / len(catalog)
        g["user_coverage"] = len(served) / len(tops)
        g["user_coverage_full"] = sum(len(top) >= k for top in tops) / len(tops)
        ordered = sorted(counts.get(i, 0) for i in catalog)
        n_cat = len(ordered)
        g["gini"] = sum((2 * j - n_cat - 1) * c for j, c in enumerate(ordered, 1)) / (n_cat * total) if total else None
        g["entropy"] = -sum(c / total * math.log2(c / total) for c in counts.values()) if total else None
        overlaps = [len(set(a) & set(b)) / k for x, a in enumerate(served) for b in served[x + 1 :]]
        g["personalization"] = 1 - sum(overlaps) / len(overlaps) if overlaps else None
        per_model[model] = g
    return per_list, per_model


# ------------------------------------------------------------------------- item groups

ITEM_GROUP_USER = ("miscalibration", "calibration_js")
ITEM_GROUP_GROUP = ("pop_rsp", "pop_reo", "exposure_disparity")


def item_groups(
    lists: dict[tuple, list[Any]],
    relevant: dict[tuple, set],
    train: list[tuple[Any, Any]],
    groups: dict[Any, list[Any]],
    k: int,
    *,
    weight: str = "uniform",
    alpha: float = 0.01,
) -> tuple[dict[tuple, dict[str, float | None]], dict[Any, dict[str, Any]]]:
    """Calibration per list ((model, user) -> items in rank order) and, per model, the
    per-group table ({group: {column: value}}, group None for relevant items outside the
    catalog) and the three comparing metrics, from their definitions, item by item.
    `groups` maps each catalog item to its groups (an item of several weighs 1/n in each);
    `relevant` holds every relevant item of each list, recommended or not."""

    def w(item: Any) -> dict[Any, float]:
        if item not in groups:
            return {None: 1.0}
        mine = set(groups[item])
        return {g: 1 / len(mine) for g in mine}

    def mix(items: list[Any], weights: list[float]) -> dict[Any, float] | None:
        total: dict[Any, float] = defaultdict(float)
        for item, x in zip(items, weights):
            for g, share in w(item).items():
                total[g] += share * x
        whole = sum(total.values())
        return {g: v / whole for g, v in total.items()} if whole > 0 else None

    trained: dict[Any, set] = defaultdict(set)
    for u, i in train:
        if i in groups:
            trained[u].add(i)
    per_list: dict[tuple, dict[str, float | None]] = {}
    for (model, user), items in lists.items():
        top = items[:k]
        p = mix(sorted(trained[user], key=str), [1.0] * len(trained[user]))
        places = [1.0 if weight == "uniform" else 1 / math.log2(r + 1) for r in range(1, len(top) + 1)]
        q = mix(top, places)
        if p is None or q is None:
            per_list[(model, user)] = {"miscalibration": None, "calibration_js": None}
            continue
        kl = sum(p[g] * math.log(p[g] / ((1 - alpha) * q.get(g, 0.0) + alpha * p[g])) for g in p)
        js = 0.0
        for g in set(p) | set(q):
            a, b = p.get(g, 0.0), q.get(g, 0.0)
            m = (a + b) / 2
            js += (a * math.log2(a / m) if a else 0.0) / 2 + (b * math.log2(b / m) if b else 0.0) / 2
        per_list[(model, user)] = {"miscalibration": kl, "calibration_js": js}
    all_groups = sorted({g for i in groups for g in groups[i]}, key=str)
    size = {g: sum(w(i).get(g, 0.0) for i in groups) for g in all_groups}
    per_model: dict[Any, dict[str, Any]] = {}
    for model in sorted({m for m, _ in lists}):
        mine = {key: items for key, items in lists.items() if key[0] == model}
        served = [key for key, items in mine.items() if items]
        rows: dict[Any, dict[str, float]] = {
            g: {"slots": 0.0, "untrained": 0.0, "exposure": 0.0, "hits": 0.0, "relevant": 0.0, "train": 0.0} for g in all_groups
        }
        for key, items in mine.items():
            for r, item in enumerate(items[:k], 1):
                for g, share in w(item).items():
                    rows[g]["slots"] += share
                    rows[g]["untrained"] += share if item not in trained.get(key[1], ()) else 0.0
                    rows[g]["exposure"] += share / math.log2(1 + r)
                    rows[g]["hits"] += share if item in relevant[key] else 0.0
            for item in relevant[key]:
                for g, share in w(item).items():
                    rows.setdefault(
                        g, {"slots": 0.0, "untrained": 0.0, "exposure": 0.0, "hits": 0.0, "relevant": 0.0, "train": 0.0}
                    )
                    rows[g]["relevant"] += share
        for _, user in served:
            for item in trained[user]:
                for g, share in w(item).items():
                    rows[g]["train"] += share
        relevant_total = sum(row["relevant"] for row in rows.values())
        slots_total = sum(row["slots"] for row in rows.values())
        exposure_total = sum(row["exposure"] for row in rows.values())
        table: dict[Any, dict[str, float | None]] = {}
        for g, row in rows.items():
            candidates = len(served) * size.get(g, 0.0) - row["train"]
            table[g] = {
                "catalog_share": size.get(g, 0.0) / sum(size.values()),
                "relevant_share": row["relevant"] / relevant_total if relevant_total else None,
                "rec_share": row["slots"] / slots_total if slots_total else None,
                "exposure_share": row["exposure"] / exposure_total if exposure_total else None,
                "group_recall": row["hits"] / row["relevant"] if row["relevant"] else None,
                "p_rec": row["untrained"] / candidates if candidates > 0 else None,
            }

        def rsd(values: list[float | None]) -> float | None:
            if any(v is None for v in values):
                return None
            mean = sum(values) / len(values)  # type: ignore[arg-type]
            if mean <= 0:
                return None
            return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) / mean  # type: ignore[operator]

        catalog_rows = [table[g] for g in all_groups]
        out: dict[str, Any] = {"table": table}
        out["pop_rsp"] = rsd([r["p_rec"] for r in catalog_rows])
        out["pop_reo"] = rsd([r["group_recall"] for r in catalog_rows])
        catalog_relevant = sum(rows[g]["relevant"] for g in all_groups)
        catalog_exposure = sum(rows[g]["exposure"] for g in all_groups)
        if catalog_exposure == 0 or any(rows[g]["relevant"] == 0 for g in all_groups):
            out["exposure_disparity"] = None
        else:
            ratios = [(rows[g]["exposure"] / catalog_exposure) / (rows[g]["relevant"] / catalog_relevant) for g in all_groups]
            out["exposure_disparity"] = max(ratios) / min(ratios) if min(ratios) > 0 else math.inf
        per_model[model] = out
    return per_list, per_model


# ------------------------------------------------------------------------- the IR toolbox

IR_METRICS = (
    "judged",
    "num_ret",
    "num_rel_ret",
    "num_nonrel_judged_ret",
    "bpref",
    "infap",
    "iprec_at_recall",
    "iprec_11pt_avg",
    "rprec_mult",
    "set_precision",
    "set_recall",
    "set_f1",
    "set_map",
    "set_relative_precision",
    "bin_g",
    "rbp",
    "rbp_residual",
    "err",
    "auc",
)
#: the IR metrics defined for every user; the others need a relevant item (err: an item that gains)
IR_DEFINED_ALWAYS = ("judged", "num_ret", "num_rel_ret", "num_nonrel_judged_ret", "set_precision", "rbp", "rbp_residual")
RECALL_PERCENTS = tuple(range(0, 101, 10))  # iprec_at_recall_0 ... _100
R_PERCENTS = tuple(range(20, 201, 20))  # rprec_mult_20 ... _200
INFAP_EPSILON = 1e-5


def trec_cut(percent: int, n_relevant: int, rounding: str = "add_0.9") -> int:
    """trec_eval 9.0's cut-off for a share of R: (long) (x * R + 0.9), x = percent / 100 as a
    double (30 / 100 is the same double as the literal 0.3), truncated; trec_eval 10.0's
    iprec_at_recall rounds instead: lround(x * R), halves away from zero (x * R >= 0)."""
    if rounding == "round":
        return int(percent / 100 * n_relevant + 0.5)
    return int(percent / 100 * n_relevant + 0.9)


def ir_columns(metric: str, ks: tuple[int, ...]) -> list[tuple[str, int | None]]:
    """The output columns of an IR metric: (column, k or None for the whole list)."""
    at = [(f"{metric}@{k}", k) for k in ks]
    bare: list[tuple[str, int | None]] = [(metric, None)]
    if metric == "iprec_at_recall":
        return [(f"iprec_at_recall_{x}", None) for x in RECALL_PERCENTS]
    if metric == "rprec_mult":
        return [(f"rprec_mult_{x}", None) for x in R_PERCENTS]
    if metric in ("judged", "err"):
        return list(at)
    if metric in ("num_ret", "num_rel_ret", "num_nonrel_judged_ret", "bpref", "rbp", "rbp_residual", "auc"):
        return bare + at
    return bare  # infap, iprec_11pt_avg, the set measures, bin_g


def ir_metrics_of_list(
    entries: list[tuple[Any, int | None, float | None]],
    ks: tuple[int, ...],
    metrics: tuple[str, ...] = IR_METRICS,
    *,
    threshold: float | None = None,
    persistence: float = 0.8,
    max_grade: float = 4.0,
    gain_threshold: str = "threshold",
    auc_without_negatives: str = "one",
    empty_users: str = "skip",
    recall_rounding: str = "add_0.9",
    negative_relevance: str = "grade",
) -> dict[str, Any]:
    """Every IR-toolbox metric of one user's list, from the definitions of issue 14, item by item.

    ``entries`` are (item, rank or None when not recommended, relevance or None when unjudged);
    a rank is the item's 1-based position p. Returns ``n_relevant`` and each metric's columns.
    Under ``negative_relevance="unjudged"`` a negative relevance is trec_eval's "in the pool,
    not judged": unjudged for every metric, pooled for infAP."""
    pooled = {item for item, _, rel in entries if rel is not None}
    if negative_relevance == "unjudged":
        entries = [(item, r, None if rel is not None and rel < 0 else rel) for item, r, rel in entries]

    def is_relevant(rel: float | None) -> bool:
        if rel is None:
            return False
        return rel >= threshold if threshold is not None else rel > 0

    def is_judged_nonrelevant(rel: float | None) -> bool:
        return rel is not None and not is_relevant(rel)

    def gains(rel: float | None) -> bool:
        if gain_threshold == "positive":
            return rel is not None and rel > 0
        return is_relevant(rel)

    R = sum(1 for _, _, rel in entries if is_relevant(rel))
    N = sum(1 for _, _, rel in entries if is_judged_nonrelevant(rel))
    q = persistence
    # the list top first: (p, relevance, j = place among the relevant ranked items, 0 if not relevant)
    ranked_items: list[tuple[int, float | None, int, Any]] = []
    found = 0
    for p, rel, item in sorted(((r, rel, item) for item, r, rel in entries if r is not None), key=lambda row: row[0]):
        found += is_relevant(rel)
        ranked_items.append((p, rel, found if is_relevant(rel) else 0, item))
    ranked = [(p, rel, j) for p, rel, j, _ in ranked_items]

    def top(cut: int | None) -> list[tuple[int, float | None, int]]:
        return [row for row in ranked if cut is None or row[0] <= cut]

    def num_ret(cut: int | None = None) -> int:
        return len(top(cut))

    def num_rel_ret(cut: int | None = None) -> int:
        return sum(1 for _, rel, _ in top(cut) if is_relevant(rel))

    def bpref(cut: int | None) -> float:
        total, nonrel_above = 0.0, 0
        for p, rel, _ in ranked:
            if is_relevant(rel) and (cut is None or p <= cut):
                total += 1.0 if nonrel_above == 0 else 1.0 - min(nonrel_above, R) / min(R, N)
            nonrel_above += is_judged_nonrelevant(rel)
        return total / R

    def infap() -> float:
        total, judged_above, pooled_above, relevant_above = 0.0, 0, 0, 0
        for p, rel, _, item in ranked_items:
            if is_relevant(rel):
                e = INFAP_EPSILON
                total += 1 / p + (pooled_above / p) * (relevant_above + e) / (judged_above + 2 * e)
            judged_above += rel is not None
            pooled_above += item in pooled
            relevant_above += is_relevant(rel)
        return total / R

    def iprec(percent: int) -> float:
        c = trec_cut(percent, R, recall_rounding)
        if num_rel_ret() == 0 or c > num_rel_ret():
            return 0.0
        return max(j / p for p, rel, j in ranked if is_relevant(rel) and j >= max(c, 1))

    def rprec(percent: int) -> float:
        c = trec_cut(percent, R)
        return num_rel_ret(c) / c

    def rbp(cut: int | None) -> float:
        return (1 - q) * sum(q ** (p - 1) for p, rel, _ in top(cut) if is_relevant(rel))

    def rbp_residual(cut: int | None) -> float:
        unjudged = (1 - q) * sum(q ** (p - 1) for p, rel, _ in top(cut) if rel is None)
        # the depth: k, or the whole list's last rank (num_ret without rank gaps)
        depth = max((p for p, _, _ in ranked), default=0) if cut is None else cut
        return unjudged + q**depth

    def err(cut: int) -> float:
        total, reach = 0.0, 1.0
        for p, rel, _ in top(cut):
            if gains(rel):
                assert rel is not None
                stop = (2 ** min(rel, max_grade) - 1) / 2**max_grade
                total += reach * stop / p
                reach *= 1 - stop
        return total

    def auc(cut: int | None) -> float:
        if cut is None:  # every relevant item, those not ranked after the whole list
            if num_ret() == 0:  # nothing recommended: nothing is in order
                return 0.0
            P, Q = R, num_ret() - num_rel_ret()
            misordered = sum(p - j for p, rel, j in ranked if is_relevant(rel)) + (R - num_rel_ret()) * Q
        else:
            P = num_rel_ret(cut)
            Q = num_ret(cut) - P
            misordered = sum(p - j for p, rel, j in top(cut) if is_relevant(rel))
        if P == 0:
            return 0.0
        if Q == 0:
            return 1.0 if auc_without_negatives == "one" else 0.0
        return 1 - misordered / (P * Q)

    def set_values() -> dict[str, float]:
        ret, rel_ret = num_ret(), num_rel_ret()
        precision = rel_ret / ret if ret else 0.0
        recall = rel_ret / R if R else 0.0  # (set_precision alone is read when R = 0)
        return {
            "set_precision": precision,
            "set_recall": recall,
            "set_f1": 2 * precision * recall / (precision + recall) if rel_ret else 0.0,
            "set_map": precision * recall,
            "set_relative_precision": rel_ret / min(ret, R) if ret and R else 0.0,
        }

    out: dict[str, Any] = {"n_relevant": R}
    for name in metrics:
        defined = name in IR_DEFINED_ALWAYS or R > 0
        if name == "err" and gain_threshold == "positive":
            defined = any(gains(rel) for _, _, rel in entries)  # a graded item, relevant or not
        for column, k in ir_columns(name, ks):
            if not defined or (R == 0 and empty_users == "skip"):  # (skip: not in the means either)
                out[column] = 0.0 if not defined and empty_users == "zero" else None
                continue
            if name == "judged":
                # the share of the items ranked within k that are judged, 0 when none is: current
                # ir_measures' Judged@k (its PR #48 divides by the items ranked when fewer than k;
                # issue 14's table said "/ k", as trec_eval's unj_k does)
                assert k is not None
                value: float = sum(1 for _, rel, _ in top(k) if rel is not None) / num_ret(k) if num_ret(k) else 0.0
            elif name == "num_ret":
                value = num_ret(k)
            elif name == "num_rel_ret":
                value = num_rel_ret(k)
            elif name == "num_nonrel_judged_ret":
                value = sum(1 for _, rel, _ in top(k) if is_judged_nonrelevant(rel))
            elif name == "bpref":
                value = bpref(k)
            elif name == "infap":
                value = infap()
            elif name == "iprec_at_recall":
                value = iprec(int(column.rsplit("_", 1)[1]))
            elif name == "iprec_11pt_avg":
                value = sum(iprec(x) for x in RECALL_PERCENTS) / len(RECALL_PERCENTS)
            elif name == "rprec_mult":
                value = rprec(int(column.rsplit("_", 1)[1]))
            elif name.startswith("set_"):
                value = set_values()[name]
            elif name == "bin_g":
                value = sum(1 / math.log2(2 + p - j) for p, rel, j in ranked if is_relevant(rel)) / R
            elif name == "rbp":
                value = rbp(k)
            elif name == "rbp_residual":
                value = rbp_residual(k)
            elif name == "err":
                assert k is not None
                value = err(k)
            elif name == "auc":
                value = auc(k)
            else:
                raise ValueError(f"not an IR metric: {name}")
            out[column] = value
    return out
