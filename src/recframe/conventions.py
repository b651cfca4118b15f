"""The evaluation conventions recframe exposes as named options, with their defaults.

Every choice that makes two ranking-metric libraries disagree is an option here, so a user can
see it, name it in a report and change it. The formulas are in the docstring of
:func:`recframe.per_user`; ``docs/conventions.md`` compares them with other libraries, and
:mod:`recframe.profiles` bundles them to reproduce one.

>>> from recframe.conventions import DEFAULTS
>>> DEFAULTS["discount"], DEFAULTS["rr_cutoff"]
('log2_rank_plus_1', True)
"""

from __future__ import annotations

from dataclasses import make_dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple, TypedDict, get_args, get_type_hints

PrecisionDenominator = Literal["k", "retrieved", "min_k_relevant"]
RecallDenominator = Literal["relevant", "min_k_relevant"]
APDenominator = Literal["min_k_relevant", "relevant", "hits", "k"]
Gain = Literal["linear", "binary", "exp2"]
EmptyUsers = Literal["skip", "zero", "error"]
IDCG = Literal["relevant", "k"]
Discount = Literal["log2_rank_plus_1", "log2_max_rank_2"]
Ties = Literal["item_asc", "item_desc", "optimistic", "pessimistic", "average"]
ScoreDtype = Literal["float64", "float32"]
UnrankedUsers = Literal["zero", "skip"]
UnjudgedUsers = Literal["empty", "skip"]
RankGaps = Literal["error", "keep", "rerank"]
Novelty = Literal["self_information", "surprisal"]
Popularity = Literal["count", "share"]
ColdItems = Literal["count", "skip"]
Distance = Literal["hamming", "cosine", "jaccard"]
GainThreshold = Literal["threshold", "positive"]
AucWithoutNegatives = Literal["one", "zero"]
RecallRounding = Literal["add_0.9", "round"]
NegativeRelevance = Literal["grade", "unjudged"]
CalibrationWeight = Literal["uniform", "rank"]


class Convention(NamedTuple):
    """A convention's documentation in per_user/summary/curve (generated from here), its one-line
    ``--help`` and, for a ``float`` convention, its default and its bounds (low, high; each end
    excluded)."""

    doc: str
    help: str
    default: float | None = None
    bounds: tuple[float, float] | None = None


class Option(NamedTuple):
    """One convention option: its type (the values it accepts, the first the default), its
    documentation in per_user/summary/curve (generated from here) and its one-line ``--help``.

    A ``float`` option takes a number in ``bounds`` (low, high; each end excluded), its
    default being ``default``."""

    kind: Any
    doc: str
    help: str
    default: float | None = None
    bounds: tuple[float, float] | None = None


class ConventionOptions(TypedDict, total=False):
    """The convention options, declared once: each one's type (the values it accepts, the first
    the default) and, in its :class:`Convention`, its documentation and one-line ``--help``.
    :class:`recframe.options.Options` takes them all (so a type checker knows them); :data:`TABLE`,
    :data:`CHOICES`, :data:`DEFAULTS` and :class:`Conventions` are derived from here."""

    precision_denominator: Annotated[
        PrecisionDenominator,
        Convention(
            """Divide precision@k by k, by the number of items actually recommended within the
top k (at least one), or by min(k, R) (RecTools' ``r_precision=True``).""",
            "what precision@k divides by: k, the items recommended, or min(k, R)",
        ),
    ]
    recall_denominator: Annotated[
        RecallDenominator,
        Convention(
            """Divide recall@k by R, or by min(k, R) as LensKit (so a user with more relevant items
than k can still reach 1).""",
            "what recall@k divides by: R, or min(k, R) as LensKit",
        ),
    ]
    ap_denominator: Annotated[
        APDenominator,
        Convention(
            """What AP@k divides its sum of precisions by: min(k, R), R (as trec_eval), the hits in
the top k, or k.""",
            "what AP@k divides by: min(k, R), R as trec_eval, the hits, or k",
        ),
    ]
    gain: Annotated[
        Gain,
        Convention(
            """The gain of a relevant item in DCG: its grade, 1, or 2**grade - 1. Items that are not
relevant gain 0.""",
            "the DCG gain of a relevant item: its grade, 1, or 2**grade - 1",
        ),
    ]
    idcg: Annotated[
        IDCG,
        Convention(
            """The ideal list nDCG divides by: the user's relevant gains in descending order, cut at
k; or k items of gain 1 whatever the user has (RecTools' default).""",
            "nDCG's ideal list: the user's relevant gains, or k items of gain 1 (RecTools)",
        ),
    ]
    discount: Annotated[
        Discount,
        Convention(
            """The DCG discount at rank i: log2(i + 1), or log2(max(i, 2)) as LensKit (ranks 1 and 2
both undiscounted).""",
            "the DCG discount at rank i: log2(i + 1), or log2(max(i, 2)) as LensKit",
        ),
    ]
    rr_cutoff: Annotated[
        bool,
        Convention(
            """True: rr@k is 0 when the first relevant item is ranked below k. False: rr@k is
1 / rank of the first relevant item wherever it is in the list, as trec_eval's
``recip_rank`` (the column keeps its ``@k`` name).""",
            "on: rr@k is 0 past k; off: 1/rank wherever the first hit is (trec_eval)",
        ),
    ]
    ties: Annotated[
        Ties,
        Convention(
            """With ``score``: how equal scores are ordered, by item ascending or descending (as
trec_eval, which compares document ids as strings); or the relevant items first
(``"optimistic"``) or last (``"pessimistic"``) within a tie, then the items that gain by grade,
descending or ascending, then by item ascending: the largest and the smallest value any order
of the tied items gives, for every gain (linear, exp2, binary) and ERR as for the binary metrics,
so they bound what the tie-break alone can do to a number; or ``"average"``: each metric's expected
value over every ordering of the tied items, in closed form (McSherry and Najork 2008, as
scikit-learn's ``ndcg_score``), for the metrics that have one (precision, recall, F1, hit rate,
R-precision, DCG, nDCG; any other is refused by name). Enum and Categorical items are ordered
by their names, not by their category order, on every engine.""",
            "with --score: order equal scores by item ascending or descending (trec_eval), relevant and higher-graded items "
            "first or last, "
            "or average over every order of the tied items",
        ),
    ]
    score_dtype: Annotated[
        ScoreDtype,
        Convention(
            """With ``score``: round scores to float32 before ranking, as pytrec_eval's bundled
trec_eval (and trec_eval up to 9.0.7) reads them, so scores equal in float32 tie; trec_eval
9.0.8 and 10.0 read a double.""",
            "with --score: round scores to float32 before ranking, as pytrec_eval reads them",
        ),
    ]
    empty_users: Annotated[
        EmptyUsers,
        Convention(
            """What to do with a user who has no relevant item: ``"skip"`` leaves them out of every
mean in :func:`summary` and gives them null for every metric in :func:`per_user` (precision
and hit rate too, though their formulas give 0), so that a plain mean of a ``per_user``
column equals the summary's; ``"zero"`` scores them 0 on everything and counts them;
``"error"`` raises.""",
            "a user with no relevant item: left out of the means, scored 0, or an error",
        ),
    ]
    unranked_users: Annotated[
        UnrankedUsers,
        Convention(
            """What to do with a user who has relevant items but no recommended item: ``"zero"``
scores them 0 and counts them; ``"skip"`` leaves them out, as trec_eval does (they still
show in the ``n_unranked`` count of :func:`summary`).""",
            "a user with relevant items but no recommendation: scored 0, or left out (trec_eval)",
        ),
    ]
    unjudged_users: Annotated[
        UnjudgedUsers,
        Convention(
            """What to do with a user who has no judged item at all (recommended to, but absent
from the truth, or with every relevance null): treat them as a user without relevant items
(``"empty"``: ``empty_users`` decides), or leave them out of the output and of every mean
(``"skip"``), as trec_eval does with a query that has no qrels (they still show in the
``n_no_truth`` count of :func:`summary`).""",
            "a user with no judged item at all: as one without relevant items, or left out (trec_eval)",
        ),
    ]
    rank_gaps: Annotated[
        RankGaps,
        Convention(
            """With ``rank``: what to do with a list whose ranks skip positions (1, 3, 7), as left
by removing rows after ranking: raise; use the ranks as positions (``"keep"``, so the
third item counts at position 7); or re-rank each list densely (``"rerank"``). Lists
ranked by ``score`` or cut by ``exclude=`` are re-ranked anyway.""",
            "ranks that skip positions (1, 3, 7): an error, used as positions, or re-ranked",
        ),
    ]
    novelty: Annotated[
        Novelty,
        Convention(
            """``novelty@k``: the mean self-information -log2(u / N) of the items in the top k, u an
item's distinct training users (at least 1: an item not in ``train=`` counts as one user's)
and N the training users (RecTools' MeanInvUserFreq); or RePlay's Surprisal: each divided by
log2(N), so that it lies in [0, 1], summed over the top k and divided by k (a list shorter
than k scores lower).""",
            "novelty@k: mean -log2(users/N) (RecTools), or RePlay's Surprisal (/ log2 N, / k)",
        ),
    ]
    popularity: Annotated[
        Popularity,
        Convention(
            """The popularity of an item in ``popularity@k``: its distinct training users, or their
share of all distinct training (user, item) pairs (RecTools' ``normalize=True``).""",
            "popularity@k of an item: its training users, or their share of all training pairs",
        ),
    ]
    cold_items: Annotated[
        ColdItems,
        Convention(
            """The items of a list that are not in ``train=`` (cold items) in ``novelty@k`` and
``popularity@k``: counted, as an item of one training user in novelty and of popularity 0
(RecTools, RePlay); or left out (``"skip"``, as Evidently): the mean is over the items ranked
within k that are in ``train=`` (under ``novelty="surprisal"``, they are left out of the sum,
still divided by k), and a list whose top k holds none of them is null there, left out of the
mean as a user with nothing recommended.""",
            "novelty/popularity of items not in train=: counted, or left out (Evidently)",
        ),
    ]
    distance: Annotated[
        Distance,
        Convention(
            """The distance between two items in ``ild@k``: Hamming, the number of
``item_features`` on which they differ (one categorical feature: 0 or 1); cosine,
1 - cos(x, y) of their numeric feature vectors; or Jaccard, 1 - |A ∩ B| / |A ∪ B| of their
label sets (list columns such as genres, a label repeated in a list counting once; a
scalar column is a one-label set; several columns pool their labels). A list column is
never compared as one value: under hamming or cosine it is refused.""",
            "ild's item distance: features that differ (hamming), 1 - cosine of vectors, or 1 - Jaccard of label sets",
        ),
    ]
    gain_threshold: Annotated[
        GainThreshold,
        Convention(
            """Which items gain in ``dcg``, ``ndcg`` (and its ideal list) and ``err``: those at or
above the threshold (the relevant ones); or every item graded above 0, while the threshold
still decides relevance for every other metric (trec_eval's ``-l``; ``profile="trec_eval"``).
Under ``"positive"`` these metrics are defined for a user with a graded item even when none
reaches the threshold.""",
            "which items gain in dcg/ndcg/err: relevant ones, or every grade > 0 (trec_eval)",
        ),
    ]
    persistence: Annotated[
        float,
        Convention(
            """``rbp`` and ``rbp_residual``: the chance p that the user goes on to the next item
(rank i weighs p**(i-1)); a number between 0 and 1, both excluded.""",
            "rbp's persistence p, between 0 and 1",
            default=0.8,
            bounds=(0.0, 1.0),
        ),
    ]
    max_grade: Annotated[
        float,
        Convention(
            """``err``: the largest grade G; an item of grade g (at most G) stops the user with
probability (2**g - 1) / 2**G. A number between 0 and 1000 (2**G must stay finite).""",
            "err's largest grade G: stop probability (2**g - 1) / 2**G",
            default=4.0,
            bounds=(0.0, 1000.0),
        ),
    ]
    auc_without_negatives: Annotated[
        AucWithoutNegatives,
        Convention(
            """``auc``: the value of a list without a non-relevant item to order against its
relevant ones: 1 (RePlay's RocAuc) or 0.""",
            "auc of a list without non-relevant items: 1 (RePlay) or 0",
        ),
    ]
    recall_rounding: Annotated[
        RecallRounding,
        Convention(
            """How ``iprec_at_recall_X`` and ``iprec_11pt_avg`` turn a recall level x (X/100) into a
count c of relevant items: ``"add_0.9"``, c = floor(x * R + 0.9) in double precision
(trec_eval 9.x and pytrec_eval); ``"round"``, c = x * R rounded half away from zero
(trec_eval 10.0's ``lround``). They differ when the fraction of x * R is in [0.1, 0.5):
R = 474, x = 0.1 gives 48 and 47.""",
            "iprec_at_recall's count of relevant items: floor(x*R + 0.9) (trec_eval 9) or round(x*R) (10.0)",
        ),
    ]
    negative_relevance: Annotated[
        NegativeRelevance,
        Convention(
            """What a relevance below 0 means: a grade like any other, judged and below every
threshold (``"grade"``); or, as trec_eval reads its qrels, an item in the judgment pool
that was not judged (``"unjudged"``): it counts as unjudged everywhere (``judged``,
``bpref``, ``num_nonrel_judged_ret``, ``rbp_residual``), and ``infap`` counts it among the
pooled items ranked above a relevant one, as trec_eval's infAP does with sampled pools.""",
            "a relevance < 0: a grade (judged), or in the pool but not judged (trec_eval)",
        ),
    ]
    calibration_weight: Annotated[
        CalibrationWeight,
        Convention(
            """``miscalibration`` and ``calibration_js``: how the items of the top k weigh in the list's
item-group mix q(g|u): each the same (Steck 2018's uniform mix), or by rank, 1 / log2(rank + 1)
(the DCG discount: the top of the list counts most).""",
            "the weight of a top-k item in calibration's q(g|u): uniform, or 1/log2(rank+1)",
        ),
    ]
    calibration_alpha: Annotated[
        float,
        Convention(
            """``miscalibration``: the share alpha of the user's training mix p blended into the list's
mix q, q~ = (1 - alpha) q + alpha p, so that KL(p || q~) stays finite when the list misses a
group the user had (Steck 2018 uses 0.01); a number between 0 and 1, both excluded.""",
            "miscalibration's alpha: KL(p || (1 - alpha) q + alpha p)",
            default=0.01,
            bounds=(0.0, 1.0),
        ),
    ]


def _table() -> dict[str, Option]:
    hints = get_type_hints(ConventionOptions, include_extras=True)
    table = {}
    for name, hint in hints.items():
        kind, convention = get_args(hint)
        table[name] = Option(kind, convention.doc, convention.help, convention.default, convention.bounds)
    return table


#: option -> its definition, from :class:`ConventionOptions`
TABLE: dict[str, Option] = _table()

#: option name -> the values it accepts (the first one is the default; a float option: its
#: default alone, any number in its bounds being accepted).
CHOICES: dict[str, tuple[Any, ...]] = {
    name: (True, False) if option.kind is bool else (option.default,) if option.kind is float else get_args(option.kind)
    for name, option in TABLE.items()
}

DEFAULTS: dict[str, Any] = {name: values[0] for name, values in CHOICES.items()}


def describe(name: str) -> str:
    """The documentation of option `name`, as a paragraph.

    >>> describe("gain")
    'The gain of a relevant item in DCG: its grade, 1, or 2**grade - 1. Items that are not relevant gain 0.'
    """
    return " ".join(TABLE[name].doc.split())


def parameters_doc(indent: str = "    ") -> str:
    """The numpydoc Parameters entries of every option, for the functions' docstrings."""
    lines = []
    for name, values in CHOICES.items():
        kind = "bool" if TABLE[name].kind is bool else "{" + ", ".join(f'"{v}"' for v in values) + "}"
        default = values[0] if TABLE[name].kind is bool else f'"{values[0]}"'
        if TABLE[name].kind is float:
            kind, default = "float", values[0]
        lines.append(f"{indent}{name} : {kind}, default {default}")
        lines += [f"{indent}    {line}" for line in TABLE[name].doc.splitlines()]
    return "\n".join(lines)


_CONVENTIONS_DOC = """One call's convention values, checked: one field per :data:`TABLE` entry, made from
:class:`ConventionOptions` (whose defaults are the one place a default is written:
``Conventions.default`` reads them).

>>> Conventions.default().ap_denominator, Conventions.default(rr_cutoff=False).rr_cutoff
('min_k_relevant', False)
"""

if TYPE_CHECKING:  # the fields are those of ConventionOptions, made at import

    class Conventions:
        def __init__(self, **values: Any) -> None: ...
        def __getattr__(self, name: str) -> Any: ...
        @classmethod
        def default(cls, **values: Any) -> Conventions: ...

else:
    Conventions = make_dataclass(
        "Conventions",
        [(name, option.kind) for name, option in TABLE.items()],
        frozen=True,
        namespace={
            "__doc__": _CONVENTIONS_DOC,
            "__module__": __name__,
            "default": classmethod(lambda cls, **values: cls(**{**DEFAULTS, **values})),
        },
    )
