"""recframe: ranking metrics for recommender systems on pandas and Polars DataFrames.

Importing recframe registers the ``.recmetrics`` namespace on ``pl.DataFrame``,
``pl.LazyFrame`` and ``pd.DataFrame`` (on pandas' the moment pandas is imported: recframe does
not import pandas or pyarrow itself).

>>> import recframe
>>> recframe.METRICS[:3]
('precision', 'recall', 'f1')
"""

from __future__ import annotations

import sys as _sys

from recframe import options
from recframe._namespace import RecMetrics, register
from recframe.api import item_groups, per_item, per_user, summary, tied_cutoffs
from recframe.curve import CappedWarning, curve
from recframe.errors import RecframeError, UncheckedDataWarning
from recframe.metrics import REGISTRY as _REGISTRY
from recframe.off_policy import off_policy
from recframe.reporting import page as _page
from recframe.reporting import plot
from recframe.reporting import report as _report
from recframe.reporting._inspect import inspect
from recframe.reporting._page.inspect_html import side_by_side
from recframe.reporting.page import report_page
from recframe.reporting.report import report
from recframe.statistics import agreement as _agreement
from recframe.statistics import cohorts as _cohorts
from recframe.statistics import compare as _compare
from recframe.statistics import disparity as _disparity
from recframe.statistics import stats
from recframe.statistics.agreement import agreement
from recframe.statistics.cohorts import item_strata, user_cohorts
from recframe.statistics.compare import combine_folds, compare, compare_letters, compare_recommendations
from recframe.statistics.disparity import disparity
from recframe.trec_eval import trec as _trec
from recframe.trec_eval.trec import read_trec_qrels, read_trec_run

#: The metric names ``metrics=`` accepts, in the default output order.
METRICS: tuple[str, ...] = tuple(_REGISTRY)

# the public module paths of before the layer folders (recframe.stats, recframe.plot, ...) stay
# importable: each name is the module where it lives now
for _name, _module in {
    "agreement": _agreement,
    "cohorts": _cohorts,
    "compare": _compare,
    "disparity": _disparity,
    "page": _page,
    "plot": plot,
    "report": _report,
    "stats": stats,
    "trec": _trec,
}.items():
    _sys.modules[f"recframe.{_name}"] = _module
    globals().setdefault(_name, _module)  # (a function of the same name keeps the name, as before)

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
