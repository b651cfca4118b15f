"""The keyword options of :func:`recframe.per_user`, :func:`recframe.summary` and
:func:`recframe.curve`, declared once.

Each option is one entry of a ``TypedDict``: its name, its type (what a type checker holds a
call to, and an IDE completes) and, in the entry's :class:`Opt`, its default and the paragraph
``help()`` shows. The functions take them as ``**options: Unpack[Options]`` and read them back
through :func:`resolve`, which refuses a name that is not an option and fills in the defaults.
The convention options (``gain``, ``ap_denominator``, ...) are declared in
:data:`recframe.conventions.TABLE`, with their values and defaults; a profile sets them when
the call leaves them out.

>>> DEFAULTS["head_share"], DEFAULTS["user"]
(0.2, 'user_id')
"""

from __future__ import annotations

import difflib
import sys
import typing
from collections.abc import Sequence
from typing import Annotated, Any, Literal, NamedTuple

from recframe.conventions import (
    TABLE,
    ConventionOptions,
    parameters_doc,
)
from recframe.errors import RecframeError, fix

CIMethod = Literal["bootstrap", "t", "poisson"]
Test = Literal["paired_t", "wilcoxon", "randomization", "tukey_hsd"]
Correction = Literal["holm", "bonferroni"]

CI_METHODS: tuple[str, ...] = ("bootstrap", "t", "poisson")
TESTS: tuple[str, ...] = ("paired_t", "wilcoxon", "randomization", "tukey_hsd")
#: unpaired tests of two groups of users (recframe.disparity)
UnpairedTest = Literal["welch", "permutation", "mann_whitney"]
UNPAIRED_TESTS: tuple[str, ...] = ("welch", "permutation", "mann_whitney")
CORRECTIONS: tuple[str | None, ...] = ("holm", "bonferroni", None)

# The statistics defaults, written once, with the options they are the defaults of: every
# function, option and command-line flag reads them here (recframe.stats names them too). An
# interval's percentile bootstrap settles with fewer resamples than a p-value near alpha, whose
# Monte Carlo error must be small beside alpha itself (about 0.002 at 10**4).
#: resamples of an interval of the means (summary's ci=, the page's distributions)
INTERVAL_RESAMPLES = 1_000
#: resamples of a test and of its interval of the difference (compare, disparity)
TEST_RESAMPLES = 10_000
#: the paired test of compare, and the unpaired test of disparity
PAIRED_TEST: Test = "paired_t"
UNPAIRED_TEST: UnpairedTest = "welch"
#: significance level of the tests
ALPHA = 0.05
#: multiple-testing correction over every row of a comparison
CORRECTION: Correction = "holm"


# at run time too, so that typing.get_type_hints works on every function taking **options
if sys.version_info >= (3, 11):
    from typing import Unpack as Unpack
else:  # pragma: no cover
    from typing_extensions import Unpack as Unpack

Aggregate = Literal["mean", "gmean", "median"]

#: the cut-off of every call that takes ``k`` when it is left out
DEFAULT_K = 10


class Opt(NamedTuple):
    """An option's default and its documentation (numpydoc: the type line, then the text)."""

    default: Any
    doc: str
    #: how the type reads in the documentation (default: the annotation)
    shown: str | None = None


class ListOptions(ConventionOptions, total=False):
    """The options of :func:`recframe.per_user` but ``by`` and ``baseline``, which
    :func:`recframe.compare_recommendations` and :func:`recframe.agreement` take as arguments
    of their own: the conventions (declared in :class:`recframe.conventions.ConventionOptions`)
    and these."""

    user: Annotated[
        str | None,
        Opt(
            "user_id",
            """Column identifying whose list a row belongs to. ``None``: the whole frame (per ``by``
group) is a single list.""",
            "str or None",
        ),
    ]
    item: Annotated[str, Opt("item_id", "Column identifying the item. Any hashable type (int, string, categorical).")]
    rank: Annotated[
        str,
        Opt(
            "rank",
            """Column with the 1-based position of the item in the list; null = not recommended.
Ignored when ``score`` is given.""",
        ),
    ]
    score: Annotated[
        str | None,
        Opt(
            None,
            """Rank by this column instead: highest score first, ties broken by ``item`` ascending;
a null score means not recommended.""",
            "str, optional",
        ),
    ]
    relevance: Annotated[
        str,
        Opt(
            "relevance",
            """Column with the item's relevance: a rating, a grade or a 0/1 label; null = unjudged,
hence not relevant (with ``truth=``, an item absent from the truth is unjudged). A
judged item below the threshold is judged not relevant: ``bpref``, ``infap``,
``judged`` and ``rbp_residual`` tell the two apart; every other metric counts both as
not relevant.""",
        ),
    ]
    threshold: Annotated[
        float | None,
        Opt(
            None,
            """An item is relevant when ``relevance >= threshold``; without one, when
``relevance > 0``. Must be > 0 unless ``gain="binary"``.""",
            "float, optional",
        ),
    ]
    truth: Annotated[
        Any,
        Opt(
            None,
            """Ground truth with columns ``user``, ``item`` and ``relevance`` (and any truth keys).
``frame`` then holds only recommendations (user, item, rank or score, by keys); the
two are joined on user, item and the truth keys (a full outer join), with the truth
broadcast over the model keys, so each model is scored on every truth user, including
those it recommended nothing to.""",
            "frame, optional",
        ),
    ]
    users: Annotated[
        Any,
        Opt(
            None,
            """The users to evaluate: the ``user`` column, one row per user, plus attribute columns
that ``by`` may name (segment, country, signup cohort). It fixes the user universe:
truth rows of users it does not list are left out, a listed user with relevant items
but no recommendations scores 0 and counts (see ``unranked_users``), and a user with
recommendations it does not list raises (see ``unlisted_users``).""",
            "frame, optional",
        ),
    ]
    exclude: Annotated[
        Any,
        Opt(
            None,
            """(user, item) pairs to leave out, typically the training interactions (items the user
has seen), optionally with ``by`` key columns to match on too (a fold, a model: a key
it holds is joined on, in the lists and the truth alike); other columns are ignored.
The pairs are removed from the recommendations, which are then re-ranked densely
(ranks 1, 3, 7 become 1, 2, 3) before any cut-off, and from the truth: a relevant item
the user had seen is not counted as relevant either.""",
            "frame, optional",
        ),
    ]
    unlisted_users: Annotated[
        Literal["error", "drop"],
        Opt(
            "error",
            """With ``users=``: what to do with a user who has recommendations but is not listed:
raise, or leave the user out.""",
        ),
    ]
    train: Annotated[
        Any,
        Opt(
            None,
            """The training interactions, (user, item) pairs under the ``user`` and ``item`` column
names (other columns ignored, duplicate pairs counted once; a ``by`` key among them is
refused): each item's popularity is its distinct training users. Read by ``novelty``,
``popularity``, ``long_tail`` and ``serendipity``; the catalog of ``catalog_coverage``,
``gini`` and ``serendipity`` without ``items=``.""",
            "frame, optional",
        ),
    ]
    items: Annotated[
        Any,
        Opt(
            None,
            """The catalog: one row per item (the ``item`` column), with the feature columns named by
``item_features``; joined on the item alone (a ``by`` key among its columns is
refused). Every item ranked within k must be in it when a metric reads it
(``catalog_coverage``, ``gini``, ``serendipity``, ``ild``, ``category_diversity``).""",
            "frame, optional",
        ),
    ]
    item_features: Annotated[
        str | Sequence[str] | None,
        Opt(
            None,
            """The columns of ``items=`` that ``ild`` compares items by (categories for
``distance="hamming"``, numbers for ``"cosine"``, label lists for ``"jaccard"``) and
``category_diversity`` counts the distinct values of. Never guessed: both need it.""",
            "str or list of str, optional",
        ),
    ]
    head_share: Annotated[
        float,
        Opt(
            0.2,
            """``long_tail``'s head: the most popular items, taken in decreasing popularity, until
this share of the distinct training (user, item) pairs is reached.""",
        ),
    ]
    item_group: Annotated[
        str | None,
        Opt(
            None,
            """The item groups of ``miscalibration``, ``calibration_js``, ``pop_rsp``, ``pop_reo``,
``exposure_disparity`` and :func:`recframe.item_groups`: a column of ``items=`` (a category,
a provider; a list column such as genres gives an item several groups, among which it
spreads its weight evenly), or ``"popularity"``: the long-tail head and tail of
``head_share``, from ``train=``, as ``long_tail`` splits them.""",
            "str, optional",
        ),
    ]
    score_threshold: Annotated[
        float | None,
        Opt(None, "With ``score``: items scored below it count as not recommended (null rank).", "float, optional"),
    ]
    profile: Annotated[
        str,
        Opt(
            "recframe",
            """Reproduce another library: ``"trec_eval"`` (10.0), ``"trec_eval9"`` (9.0.8 and
pytrec_eval), ``"ranx"``, ``"rectools"``, ``"replay"``,
``"recommenders"``, ``"lenskit"`` or ``"evidently"`` set every convention option below
to that library's behaviour and make ``metrics`` default to the metrics it has (asking for one
it lacks raises). A metric the peer has only without a cut-off (trec_eval's and
ranx's R-precision) gives its bare column alone. An option given explicitly
overrides the profile. The defaults below are the ``"recframe"`` profile's;
``docs/conventions.md`` has the others.""",
        ),
    ]
    check_duplicates: Annotated[
        bool | Literal["used"],
        Opt(
            "used",
            """Check that no item and no rank repeats within a list. ``"used"`` checks the rows that
can change a number: every relevant row and every row ranked within the largest k
(after ``exclude=`` re-ranks); a duplicate among the other rows (not relevant, ranked
past every k or not ranked) changes no value and is not looked for. A column that
reads positions past the largest k (a bare column such as ``r_precision``, the columns
of ``iprec_at_recall`` and ``rprec_mult``, ``rr`` with ``rr_cutoff=False``) reads the
relevant rows alone when ranks are used as given; where positions are counted
(``score=``, ``exclude=``, ``rank_gaps="rerank"``), or a column reads rows that are
neither relevant nor within k (``num_ret``'s list length, ``bpref``'s judged items,
the grades below the threshold under ``gain_threshold="positive"``), every row is
checked. ``True`` checks every row of every list, which costs about as much as
computing the metrics. ``False`` skips the check, for data known to be clean:
duplicates then give wrong numbers, silently. The other data checks always read every
row. ``checks=False`` implies ``False``.""",
            '{"used", True, False}',
        ),
    ]
    checks: Annotated[
        bool,
        Opt(
            True,
            """Run the data checks (the default): null keys, duplicate items and ranks (see
``check_duplicates``), ranks that are not whole or < 1, rank gaps (``rank_gaps="error"``),
NaN or infinite relevance, NaN scores, grades that overflow ``gain="exp2"``, the rows of
``users=`` and unlisted users (``unlisted_users="error"``), items ranked within k outside
the catalog. ``False``: you vouch for the data: the engine computes none of these counts
(the point is speed) and a defect then gives wrong numbers silently (a duplicate row counts
twice, a NaN relevance makes NaN means, a rank gap is used as a position, an unlisted user
is left out). The arguments, column names and dtypes are still checked, and so are
``train=`` and ``items=`` (one small query each, when given). Named where the call is
recorded: a :class:`recframe.UncheckedDataWarning` per call, the page's list of checks, the
command line's ``--no-checks`` line. ``check_duplicates`` given as ``True`` or ``"used"``,
or ``empty_users="error"``, asks for a check that ``False`` switches off: refused.""",
        ),
    ]


class Options(ListOptions, total=False):
    """The options of :func:`recframe.per_user` (and of summary and curve, which take them all):
    those of :class:`ListOptions`, the keys and the baseline model."""

    by: Annotated[
        str | Sequence[str] | None,
        Opt(
            None,
            """Key columns: every (by keys, user) pair is a separate list, and ``summary`` has one row
per combination. Each key is looked up where it lives: a column of the recommendations
only is a *model key* (``"model"``: with ``truth=``, every model is scored on every
truth user); a column of ``truth=`` too is a *truth key* (``"fold"``, a date: the two
frames are joined on it, never broadcast across it); a column of ``users=`` is a *user
attribute* (``"segment"``, ``"cohort"``: joined onto each user's row). A key found
nowhere, or both in ``users=`` and elsewhere, raises.""",
            "str or list of str, optional",
        ),
    ]
    baseline: Annotated[
        Any,
        Opt(
            None,
            """The model (a value of the one model key in ``by``) whose lists ``intersection`` and
``unexpectedness`` compare every model's lists with, user by user.""",
            "any, optional",
        ),
    ]


class IntervalOptions(Options, total=False):
    """The options of :func:`recframe.curve`: those of :func:`recframe.per_user`, and the
    intervals of the means."""

    ci: Annotated[
        float | None,
        Opt(
            None,
            """Add an interval of each mean at this coverage (e.g. 0.95), by ``ci_method``. With it,
every metric column ``<col>`` is followed by ``<col>_std`` (the sample standard
deviation of the per-user values, ddof=1), ``<col>_lo`` and ``<col>_hi``. Without it
(the default) the output is the means alone.""",
            "float, optional",
        ),
    ]
    ci_method: Annotated[
        CIMethod,
        Opt(
            "bootstrap",
            """``"bootstrap"``: percentile bootstrap over the counted users of each group
(numpy only). ``"t"``: mean -/+ t quantile x std / sqrt(n_users) (needs scipy:
``pip install "recframe[stats]"``). ``"poisson"``: the Poisson bootstrap, inside the engine
(Polars, DuckDB, Spark, SQLFrame or Ibis; the same interval on each for a seed): every
counted user weighs a Poisson(1) draw per resample, computed from the seed, the resample and
the user; intervals of the mean only. Within Monte Carlo noise of ``"bootstrap"``'s on
hundreds of users per group, a little wider on a few (docs/reporting.md).""",
        ),
    ]
    n_resamples: Annotated[
        int,
        Opt(
            INTERVAL_RESAMPLES,
            """Bootstrap resamples (each draws ``n_users`` users with replacement; with
``ci_method="poisson"``, each weighs every user by a Poisson(1) draw).""",
        ),
    ]
    seed: Annotated[
        int | None,
        Opt(
            None,
            """Seed of the bootstrap (``numpy.random.default_rng``): the same seed and data give the
same intervals. Groups are resampled in key order, each aggregate (``aggregate=``) from a
generator of its own, so asking for another aggregate moves no interval. With
``ci_method="poisson"`` the seed keys the engine's own generator: the same seed gives the
same intervals on every engine.""",
            "int, optional",
        ),
    ]


class SummaryOptions(IntervalOptions, total=False):
    """The options of :func:`recframe.summary`: those of :func:`recframe.curve`, and how the
    means are taken."""

    aggregate: Annotated[
        Aggregate | Sequence[Aggregate | str],
        Opt(
            "mean",
            """How each metric column is summarised over the counted users: ``"mean"``;
``"gmean"``, the geometric mean as trec_eval's ``gm_map`` and ``gm_bpref``,
exp(mean(log(max(value, 1e-5)))), so one user at 0 pulls it down without zeroing it;
``"median"``; or a quantile ``"pNN"`` (``"p10"``, ``"p90"``: whole percents from 0 to 100),
by numpy's default linear interpolation on every engine. One of them: the columns keep
their names (``ap@10`` is then the median AP). A list (``["mean", "median", "p90"]``):
the mean keeps the names and each other aggregate follows it suffixed
(``ndcg@10_median``, ``ndcg@10_p90``). The counts stay the same; a group-level metric
keeps its one value.""",
            '{"mean", "gmean", "median", "pNN"} or a list of them',
        ),
    ]
    partitions: Annotated[
        int | None,
        Opt(
            None,
            """Evaluate the users in this many sets, one after another, split by a hash of the
user id, and add up each set's sums and counts (a metric's mean over the sets S is
sum_S(sum of its counted values) / sum_S(their count)): the numbers are those of one pass (to
the last few bits of a float), and memory is that of one set, for the cost of reading the
input once per set. For exports larger than memory (``pl.scan_parquet``; each set is collected
by Polars' streaming engine, so the summary is computed when called). Means, ``gmean``, the
group-level metrics (coverage, Gini, entropy, personalization, the item-group comparisons:
from each set's counts per item or item group, added up) and ``ci=`` with ``ci_method="t"``
(from each set's counts, sums and standard deviations), and the quantiles (``"median"``,
``"pNN"``: from each set's count of lists per value, added up, so memory also holds a row per
distinct value); a bootstrap interval resamples every user at once and is refused. Polars,
pandas and Arrow frames (docs/engines.md). At most one set per distinct user (of the frame,
``truth=`` and ``users=``): a larger N is capped there, since more sets would be empty and each
reads the input again; the numbers are the same for any N.""",
            "int, optional",
        ),
    ]


#: where the options Options adds to ListOptions stand among them: after these
_PLACE = {"by": "threshold", "baseline": "item_features"}


def _declared(options: type) -> dict[str, tuple[Any, Opt | None]]:
    """name -> (annotation, its Opt; None for a convention) of a TypedDict of options."""
    hints = typing.get_type_hints(options, include_extras=True)
    # the conventions (inherited, so first in the hints) stand after the profile that sets them
    own = [name for name in hints if name not in TABLE]
    at = own.index("profile") + 1 if "profile" in own else len(own)
    order = [*own[:at], *(name for name in hints if name in TABLE), *own[at:]]
    for name, after in _PLACE.items():  # (declared apart, in Options: shown where they belong)
        if name in order and after in order:
            order.remove(name)
            order.insert(order.index(after) + 1, name)
    out: dict[str, tuple[Any, Opt | None]] = {}
    for name, hint in ((name, hints[name]) for name in order):
        extra = [m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Opt)]
        out[name] = (hint, extra[0] if extra else None)
        assert extra or name in TABLE, f"option {name!r} needs an Opt (its default and documentation)"
    return out


_PER_USER = _declared(Options)
_SUMMARY = _declared(SummaryOptions)
#: every option's default (conventions: None, meaning "the profile's value")
DEFAULTS: dict[str, Any] = {name: opt.default if opt else None for name, (_, opt) in _SUMMARY.items()}
PER_USER_NAMES: tuple[str, ...] = tuple(_PER_USER)
CURVE_NAMES: tuple[str, ...] = tuple(_declared(IntervalOptions))
SUMMARY_NAMES: tuple[str, ...] = tuple(_SUMMARY)


def resolve(options: dict[str, Any], allowed: Sequence[str], function: str) -> dict[str, Any]:
    """The call's options with every one it left out at its default; a name that is not an
    option of `function` raises, with the closest name.

    >>> resolve({"threshold": 4}, PER_USER_NAMES, "per_user")["user"]
    'user_id'
    """
    for name in options:
        if name not in allowed:
            close = difflib.get_close_matches(name, allowed, n=1)
            raise RecframeError(
                f"{function}() has no option {name!r}.",
                f"did you mean {fix(close[0], options[name])}?" if close else f"see help(recframe.{function}) for its options.",
            )
    return {name: options.get(name, DEFAULTS[name]) for name in allowed}


def parameters(names: Sequence[str]) -> str:
    """The numpydoc Parameters entries of the options `names`, for a function's docstring (the
    conventions' from :func:`recframe.conventions.parameters_doc`, where they stand)."""
    lines: list[str] = []
    conventions_done = False
    for name in names:
        hint, opt = _SUMMARY[name]
        if opt is None:
            if not conventions_done:
                lines.append(parameters_doc())
                conventions_done = True
            continue
        shown = opt.shown or _type_text(hint)
        default = "" if opt.default is None else f", default {opt.default!r}".replace("'", '"')
        lines.append(f"    {name} : {shown}{default}")
        lines += [f"        {line}" for line in opt.doc.splitlines()]
    return "\n".join(lines)


def _type_text(hint: Any) -> str:
    """A declared type as the documentation shows it: the Literal's values, or the type's name."""
    base = typing.get_args(hint)[0] if getattr(hint, "__metadata__", None) else hint
    if typing.get_origin(base) is Literal:
        return "{" + ", ".join(f'"{v}"' if isinstance(v, str) else repr(v) for v in typing.get_args(base)) + "}"
    return getattr(base, "__name__", str(base))
