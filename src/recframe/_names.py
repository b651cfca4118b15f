"""Every internal column name, in one place.

A user's own columns are renamed to these for the computation, so that no name of theirs can
collide with ours; the engine, the checks and the term declarations read them from here.
"""

from __future__ import annotations

# the user's columns, renamed
USER, ITEM, RANK, SCORE, REL = "__rf_user", "__rf_item", "__rf_rank", "__rf_score", "__rf_rel"
# the rank as given, kept for the range check when lists are re-ranked
RAW_RANK = "__rf_raw_rank"
# per row: the relevance flag (0/1), the gain of a relevant row (0 for the others) and the
# position (the rank, NOT_RANKED where it is null)
RELEVANT, GAIN, POSITION = "__rf_relevant", "__rf_gain", "__rf_position"

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

# summary's working columns
COUNTED, GROUP = "__rf_counted", "__rf_group"


def term_column(name: str, k: int | None = None) -> str:
    """The column of a term's per-list (or per-group) value: ``term_column("hits@", 10)``."""
    return f"__rf_{name}{k}" if name.endswith("@") else f"__rf_{name}"


def feature_column(name: str) -> str:
    """The column of a row feature (a window over a list's rows, see metrics._registry.Feature)."""
    return f"__rf_feature:{name}"


def attr_count(key: str) -> str:
    """A user's non-null values of the users= column ``key``."""
    return f"__rf_attr_count:{key}"


def check_column(name: str) -> str:
    """The 0/1 (or count) column of one data problem per list."""
    return f"__rf_check:{name}"
