"""Who the lists serve: item groups (``item_group=``), popularity bias and calibration.

The item groups g are the values of an ``items=`` column (a category, a provider; a list
column gives an item several groups, each with weight w(i, g) = 1 / its number of groups) or,
under ``item_group="popularity"``, the long-tail head and tail of ``head_share`` (as
``long_tail`` splits them). Sums below weigh each item i by w(i, g); "slots" are the rows ranked
<= k of every list of the summary group, "hits" the relevant ones among them; U is the lists of
the group with an item recommended, |g| = sum over the catalog of w(i, g), and T(u, g) = sum
over u's distinct training items of w(i, g).

User-level (a value per list, averaged by ``summary``; null for a user with nothing
recommended, or with no training item in ``items=``, who is left out of the mean):

- ``miscalibration@k`` (Steck 2018) = KL(p || q~) = sum over g with p(g) > 0 of
  p(g) ln(p(g) / q~(g)), natural log, with p(g|u) = T(u, g) / sum over g of T(u, g) (the mix of
  the user's training items), q(g|u) = the mix of the items ranked <= k (each weighing 1, or
  1 / log2(rank + 1) under ``calibration_weight="rank"``) and q~ = (1 - alpha) q + alpha p,
  alpha = ``calibration_alpha`` (0.01).
- ``calibration_js@k`` (RADio) = the Jensen-Shannon divergence of p and q, base 2 (from 0,
  the same mix, to 1, no group in common): (KL2(p || m) + KL2(q || m)) / 2, m = (p + q) / 2.

Group-level (a value per ``summary`` group, over its item groups; the per-group values are
:func:`recframe.item_groups`' columns):

- ``pop_rsp@k`` (Zhu et al. 2020, ranking-based statistical parity) = std / mean over the
  groups of P(rec | g) = (slots on g's items) / (U |g| - sum over the U lists of T(u, g)): the
  chance that an item of g the user has not trained on is recommended. Population standard
  deviation (ddof=0), as Elliot's.
- ``pop_reo@k`` (ranking-based equal opportunity) = std / mean over the groups of
  P(rec | g, relevant) = (hits on g's items) / (g's relevant items): ``group_recall@k``. Null
  when a group has no relevant item (its recall is undefined).
- ``exposure_disparity@k`` = max over min, across the groups, of exposure_share / relevant_share,
  exposure being sum over slots of 1 / log2(1 + rank) (Singh & Joachims 2018): 1 when every
  group gets the exposure its relevant items earn; infinite when a group with relevant items
  gets none; null when a group has no relevant item.

All three are 0 / 1 at parity, larger further from it, and computed from per-(group, item
group) counts: never from user x item pairs.
"""

from __future__ import annotations

import narwhals as nw

from recframe.metrics._registry import Metric, Term, col, declare


def _computed(name: str, level: str) -> Term:
    """A term recframe._item_groups computes (per list or per summary group) and joins: its
    value is read from its column, never aggregated by the engine's passes."""
    return Term(name, "item_group", lambda r, k: nw.lit(None), at_k=True, level=level, reads="top_k")  # type: ignore[arg-type]


declare(
    _computed("miscalibration@", "user"),
    _computed("calibration_js@", "user"),
    _computed("pop_rsp@", "group"),
    _computed("pop_reo@", "group"),
    _computed("exposure_disparity@", "group"),
)


def _read(term: str, level: str, requires: tuple[str, ...]) -> Metric:
    return Metric(
        name=term.rstrip("@"),
        terms=lambda o: (term,),
        finish=lambda k, o: col(term, k),
        defined="ranked" if level == "user" else "relevant",
        level=level,  # type: ignore[arg-type]
        requires=requires,
        higher_is_better=False,
    )


MISCALIBRATION = _read("miscalibration@", "user", ("item_group", "train", "catalog"))
CALIBRATION_JS = _read("calibration_js@", "user", ("item_group", "train", "catalog"))
POP_RSP = _read("pop_rsp@", "group", ("item_group", "train", "catalog"))
POP_REO = _read("pop_reo@", "group", ("item_group", "catalog"))
EXPOSURE_DISPARITY = _read("exposure_disparity@", "group", ("item_group", "catalog"))

ITEM_GROUPS = (MISCALIBRATION, CALIBRATION_JS, POP_RSP, POP_REO, EXPOSURE_DISPARITY)
