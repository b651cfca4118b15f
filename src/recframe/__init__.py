"""recframe: ranking metrics for recommender systems on pandas and Polars DataFrames.

Importing recframe registers the ``.recmetrics`` namespace on ``pl.DataFrame``,
``pl.LazyFrame`` and ``pd.DataFrame`` (on pandas' the moment pandas is imported: recframe does
not import pandas or pyarrow itself).

>>> import recframe
>>> recframe.METRICS[:3]
('precision', 'recall', 'f1')
"""

from __future__ import annotations

from recframe import options, plot, stats
from recframe._inspect import inspect
from recframe._namespace import RecMetrics, register
from recframe._page.inspect_html import side_by_side
from recframe.agreement import agreement
from recframe.api import item_groups, per_item, per_user, summary, tied_cutoffs
from recframe.cohorts import item_strata, user_cohorts
from recframe.compare import combine_folds, compare, compare_letters, compare_recommendations
from recframe.curve import CappedWarning, curve
from recframe.disparity import disparity
from recframe.errors import RecframeError, UncheckedDataWarning
from recframe.metrics import REGISTRY as _REGISTRY
from recframe.off_policy import off_policy
from recframe.page import report_page
from recframe.report import report
from recframe.trec import read_trec_qrels, read_trec_run

#: The metric names ``metrics=`` accepts, in the default output order.
METRICS: tuple[str, ...] = tuple(_REGISTRY)

__version__ = "0.1.0"
__all__ = [
    "METRICS",
    "CappedWarning",
    "RecMetrics",
    "RecframeError",
    "UncheckedDataWarning",
    "agreement",
    "combine_folds",
    "compare",
    "compare_letters",
    "compare_recommendations",
    "off_policy",
    "options",
    "curve",
    "disparity",
    "item_groups",
    "item_strata",
    "inspect",
    "per_item",
    "tied_cutoffs",
    "per_user",
    "plot",
    "read_trec_qrels",
    "read_trec_run",
    "report",
    "report_page",
    "side_by_side",
    "stats",
    "summary",
    "user_cohorts",
]

register()
