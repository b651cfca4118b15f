"""One self-contained HTML page per evaluation: what was evaluated, under which conventions, the
summary with intervals and significance, the paired comparison, curves, per-user
distributions, segments and folds, beyond-accuracy and fairness sections, and example users.

The page is one file with no external script, stylesheet, font or image: figures are inline
SVG written by recframe itself (no matplotlib needed), tables are ``<table>`` elements, and every
value is escaped. It opens offline, e.g. from an e-mail attachment. The work is done in
:mod:`recframe._page`: the numbers are collected first (``data``), then each section is
rendered from them (``sections``, ``figures``, ``html``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from recframe import _call, _frames
from recframe._page import data
from recframe._page import sections as parts
from recframe._page.html import Page
from recframe.options import SummaryOptions, Unpack

#: the page's interval coverage when ``ci`` is not passed (summary's own default is none)
PAGE_CI = 0.95


@_frames.engine_call
def report_page(
    recs: Any,
    *,
    k: int | Sequence[int] = 10,
    inputs: Sequence[Mapping[str, Any]] | None = None,
    out: str | os.PathLike[str] | None = None,
    metrics: Sequence[str] | None = None,
    precision: int = 3,
    title: str = "recframe evaluation",
    command: str | None = None,
    headline: str | None = None,
    sections: str | Sequence[str] | None = None,
    **options: Unpack[SummaryOptions],
) -> str:
    """One self-contained HTML page of an evaluation: everything a colleague needs to read it.

    The page opens with a verdict: the headline metric's best model (models tied with it, equal
    to 12 significant digits or not distinguishable by the test, named as a tie), the best against
    the runner-up tested (every pair of models is compared, baseline or not), with ``baseline``
    the models significantly better or worse than it, and the other metrics one row each. Then
    the main part, three A4 pages at most: the summary with intervals, the comparison, and each
    segment's means of the headline metric. Then the appendix: what was evaluated (the exact call or command line, the
    side inputs given or not, the versions of Python, recframe, Polars, narwhals and the engine,
    the inputs with rows and hashes, the users counted and skipped, the data checks that ran,
    every convention with who set it); the summary with intervals and significance marks; the
    paired comparison (figure and table); precision-recall and nDCG-vs-k curves; per-user
    distributions; a section per user attribute (``users=``) or truth key (a fold); beyond
    accuracy with ``train=`` / ``items=``; item groups with ``item_group=``; example users.

    Parameters
    ----------
    recs : frame
        Recommendations (or a frame with ranks and relevance), as :func:`recframe.summary`
        takes them. pandas and Arrow inputs are converted to Polars once for the whole page.
    k : int or list of int, default 10
        Cut-offs of the summary; the largest is the one of the figures, and the curves run
        from 1 to it.
    inputs : list of dict, optional
        What the inputs were, one dict per file with the keys ``"input"`` (``"recs"``,
        ``"truth"``, ...), ``"file"``, ``"rows"`` and ``"sha256"`` (the command line passes the
        files it read). Default: the row count of each frame given.
    out : str or path, optional
        Also write the page to this file (atomically: a temporary file renamed onto it).
    metrics : list of str, optional
        The metrics of the summary and the comparison (default: summary's).
    precision : int, default 3
        Decimals of the numbers shown, from 0 to 17.
    title : str, default "recframe evaluation"
        The page's title: its ``<title>`` (the browser tab, a bookmark) and its heading.
    command : str, optional
        The command line recorded as the page's provenance (``recframe report`` passes the one
        typed). Default: this call, rebuilt from the arguments given (a frame as ``<frame: N
        rows, sha256 1a2b3c4d5e6f>``: the start of its content hash, whole in the inputs table).
    headline : str, optional
        The verdict's headline metric: a metric column (``"ndcg@10"``) or a metric (at its
        smallest k). Default: the first ranking metric asked, in the order nDCG, AP, RR, else
        the first metric asked, at the smallest k.
    sections : str or list of str, optional
        The sections on the page (default: every one). The main part: ``"summary"`` (the means
        with intervals), ``"comparison"`` (against the baseline, a figure and a table; without a
        baseline the letter table of every pair) and ``"segments"`` (a models x groups table of
        the headline metric per user attribute). The appendix: ``"evaluated"`` (provenance, inputs,
        users counted, data checks, conventions), ``"pairs"`` (every pair of models),
        ``"curves"``, ``"distributions"``, ``"segment_tables"`` (each segment's gaps and
        comparisons), ``"folds"``, ``"agreement"``, ``"beyond"``, ``"item_groups"``,
        ``"examples"`` (users' lists), ``"glossary"``. ``"brief"`` is the main part alone,
        ``"all"`` every section. A section left out is not computed.
    **options
        Any option of :func:`recframe.summary` (typed as
        :class:`recframe.options.SummaryOptions`: ``score=``, ``relevance=``, ``threshold=``,
        ``by=``, ``users=``, ``exclude=``, ``profile=``, conventions, ``seed=``, ...). The page
        reads these ones itself:

        - ``truth`` (frame): ground truth, as in :func:`recframe.summary`.
        - ``baseline`` (a value of the model column): the model the others are compared with
          (:func:`recframe.compare`, paired t test with Holm's correction, or the randomization
          test without scipy); needs one model key in ``by``. Without it the page compares
          every pair of models when there are three or more.
        - ``ci`` (float or None): coverage of the intervals of the means. **The page's default
          is 0.95** when ``ci`` is not passed (:func:`recframe.summary`'s is no interval);
          ``ci=None`` passed explicitly means no intervals.
        - ``train``, ``items`` (frames): training interactions and the catalog: they add the
          beyond-accuracy section (novelty, popularity, catalog coverage, Gini) and, with
          ``item_group=``, the item-groups section.

    Returns
    -------
    str
        The page, a complete HTML document.

    Notes
    -----
    Figures are inline SVG written by recframe (no matplotlib needed); nothing loads from the
    network. The summary is :func:`recframe.summary` with ``ci=`` exactly; the comparison, the
    distributions and the segments come from one :func:`recframe.per_user` frame.

    Examples
    --------
    >>> import recframe
    >>> from recframe.data import load_sample
    >>> recs, truth = load_sample()
    >>> page = recframe.report_page(recs, truth=truth, baseline="popular", score="score", relevance="rating",
    ...                             threshold=4, by="model", metrics=["ndcg", "recall"], seed=0)
    >>> page.startswith("<!DOCTYPE html>"), "<table>" in page
    (True, True)
    """
    rest: dict[str, Any] = dict(options)
    truth, baseline, train, items = (rest.pop(name, None) for name in ("truth", "baseline", "train", "items"))
    ci = rest.pop("ci", PAGE_CI)  # passed as None: no intervals
    arguments = (recs, truth, baseline, k, ci, train, items, inputs, out, metrics, precision, rest)
    request = data.request(*arguments, title=title, command=command, headline=headline, sections=sections)
    page = Page()
    # a stage's sections are made while the next stage's numbers compute (its calls share inputs)
    with _call.shared_preparation():
        collected = data.collect(request, lambda stage, partial: page.extend(parts.made_at(stage, partial)))
    page.extend(parts.made_at("all", collected))
    text = page.html(request.title, parts.lead(collected))
    if request.path is not None:
        data.write(request.path, text)
    return text
