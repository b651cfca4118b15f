"""Every internal column name, in one place.

A user's own columns are renamed to these for the computation, so that no name of theirs can
collide with ours; the engine, the checks and the term declarations read them from here.
"""

from __future__ import annotations

# the user's columns, renamed
USER, ITEM, RANK, SCORE, REL = "__rf_user", "__rf_item", "__rf_rank", "__rf_score", "__rf_rel"
# the rank as given, kept for the range check when lists are re-ranked
RAW_RANK = "__rf_raw_rank"
# in an in-memory frame whose lists come as contiguous runs of rows: the run's number (0, 1,
# 2, ... in row order), which the per-list passes group by alone (recframe.engine._frames.list_runs)
LIST = "__rf_list"
#: 1 on a row that takes a position when lists are ranked by score (a score, not cut by score_threshold)
ELIGIBLE = "__rf_eligible"
# per row: the relevance flag (0/1), the gain of a relevant row (0 for the others) and the
# position (the rank, NOT_RANKED where it is null)
RELEVANT, GAIN, POSITION = "__rf_relevant", "__rf_gain", "__rf_position"
# under ties="average", per row near the top (TIE_NEAR; the others keep their own), over its
# group of equal scores: the share of relevant rows and the mean gain (what its position holds
# on average over the group's orderings), and the chance that the rows up to it within the
# group hold no relevant item, given the rows before it hold none: (g - r - j) / (g - j) for
# the j-th row (from 0) of a group of g rows, r relevant
TIE_HIT, TIE_GAIN, TIE_MISS = "__rf_tie_hit", "__rf_tie_gain", "__rf_tie_miss"
# the ranked rows whose group of equal scores reaches a position a term sums (recframe.engine._engine)
TIE_NEAR = "__rf_tie_near"
# (DuckDB: the score at the largest k, from the ranking's own sort; see _engine.score_positions)
TIE_FLOOR = "__rf_tie_floor"

# facts of each list, over all its rows (the "all" row domain)
N_ROWS, N_ITEMS_SET = "__rf_n_rows", "__rf_n_items_set"
N_RANKED, N_JUDGED = "__rf_n_ranked", "__rf_n_judged"
MIN_RANK, MAX_RANK = "__rf_min_rank_any", "__rf_max_rank"
BAD_RANK, BAD_REL, BAD_SCORE, BAD_GAIN = "__rf_bad_rank", "__rf_bad_rel", "__rf_bad_score", "__rf_bad_gain"
# the rows the duplicate check reads, per list: their count, distinct items, ranked rows and
# distinct ranks (every row, or only the rows that can change a number: see _checks)
DUP_ROWS, DUP_ITEMS = "__rf_dup_rows", "__rf_dup_items"
DUP_RANKED, DUP_RANKS = "__rf_dup_ranked", "__rf_dup_ranks"
# with users=: the user's rows there
USER_ROWS = "__rf_user_rows"

# summary's working columns (N_LISTS: every list of the group, counted or not)
COUNTED, GROUP, N_LISTS = "__rf_counted", "__rf_group", "__rf_n_lists"
#: per list, read by the metrics' finishing expressions (recframe.engine._engine.user_flags): it has a
#: relevant item, an item that gains, a ranked item; it counts for the metrics (see counted_value)
HAS_RELEVANT, HAS_GRADED, HAS_RANKED = "__rf_has_relevant", "__rf_has_graded", "__rf_has_ranked"
COUNTS, COUNTS_RANKED = "__rf_counts", "__rf_counts_ranked"

# side inputs (recframe.engine._side), joined onto the rows that read them: per item, the distinct
# training users (0 for an item not in train=), the head flag of the long-tail split and the
# catalog flag (1, null for an item outside the catalog); per call, the training users, the
# distinct training (user, item) pairs and the catalog size; per row, the item's rank in the
# baseline model's list of the same user (null where it is not there)
POPULARITY, IN_HEAD, IN_CATALOG = "__rf_popularity", "__rf_in_head", "__rf_in_catalog"
# the item's place among the training items by decreasing popularity (dense: 1, 2, ...)
POPULARITY_RANK = "__rf_popularity_rank"
N_TRAIN_USERS, TRAIN_PAIRS, CATALOG_SIZE = "__rf_n_train_users", "__rf_train_pairs", "__rf_catalog_size"
BASE_RANK = "__rf_base_rank"
# label sets (list-valued item features): an item's labels, and per ranked row the summed
# Jaccard similarity to the items ranked before it and the labels it is first to bring
LABEL, N_LABELS = "__rf_label", "__rf_n_labels"
SIMILARITY_BEFORE, NEW_LABELS = "__rf_similarity_before", "__rf_new_labels"
# the first recommended item outside the catalog, per list, and their count (a data check)
OUTSIDE_CATALOG, OUTSIDE_ITEM = "__rf_outside_catalog", "__rf_outside_item"
# item groups (item_group=): an item's group (one row per group of the item) and its weight
# there (1 / its number of groups)
ITEM_GROUP, GROUP_WEIGHT = "__rf_item_group", "__rf_group_weight"
# 1 on every row: what a running count sums
ONE = "__rf_one"
#: 1 for a row of the judgment pool (judged, or negative under negative_relevance="unjudged")
POOLED = "__rf_pooled"


def term_column(name: str, k: int | None = None) -> str:
    """The column of a term's per-list (or per-group) value: ``term_column("hits@", 10)``."""
    return f"__rf_{name}{k}" if name.endswith("@") else f"__rf_{name}"


def feature_column(name: str) -> str:
    """The column of a row feature (a window over a list's rows, see metrics._registry.Feature)."""
    return f"__rf_feature:{name}"


def item_feature(name: str) -> str:
    """An item feature of items= (``item_features=``), joined onto the rows that read it."""
    return f"__rf_item_feature:{name}"


def attr_count(key: str) -> str:
    """A user's non-null values of the users= column ``key``."""
    return f"__rf_attr_count:{key}"


def check_column(name: str) -> str:
    """The 0/1 (or count) column of one data problem per list."""
    return f"__rf_check:{name}"
