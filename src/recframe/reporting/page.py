"""One self-contained HTML page per evaluation: what was evaluated, under which conventions, the
summary with intervals and significance, the paired comparison, curves, per-user
distributions, segments and folds, beyond-accuracy and fairness sections, and example users.

The page is one file with no external script, stylesheet, font or image: figures are inline
SVG written by recframe itself (no matplotlib needed), tables are ``<table>`` elements, and every
value is escaped. It opens offline, e.g. from an e-mail attachment. The work is done in
:mod:`recframe.reporting._page`: the numbers are collected first (``data``), then each section is
rendered from them (``sections``, ``figures``, ``html``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from recframe.engine import _call, _frames
from recframe.options import SummaryOptions, Unpack
from recframe.reporting._page import data
from recframe.reporting._page import sections as parts
from recframe.reporting._page.html import Page

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

    A verdict (the headline metric's best model, ties named; the best against the runner-up,
    tested; with ``baseline`` the models significantly better or worse than it; the other metrics
    one row each), the main part (three A4 pages), then the appendix (see ``sections``).

    Parameters
    ----------
    recs : frame
        Recommendations (or a frame with ranks and relevance), as :func:`recframe.summary`
        takes them. pandas and Arrow inputs are converted to Polars once for the whole page.
    k : int or list of int, default 10
        Cut-offs of the summary; the largest is the figures' (the curves run from 1 to it).
    inputs : list of dict, optional
        What the inputs were, one dict per file with the keys ``"input"`` (``"recs"``, ...),
        ``"file"``, ``"rows"`` and ``"sha256"`` (the command line passes the files it read).
        Default: each frame's rows and content hash.
    out : str or path, optional
        Also write the page to this file (atomically: a temporary file renamed onto it).
    metrics : list of str, optional
        The metrics of the summary and the comparison (default: summary's).
    precision : int, default 3
        Decimals shown, from 0 to 17.
    title : str, default "recframe evaluation"
        The page's ``<title>`` (the browser tab, a bookmark) and heading.
    command : str, optional
        The command line recorded as the page's provenance (``recframe report`` passes the one
        typed). Default: this call rebuilt (a frame as ``<frame: N rows, sha256 1a2b3c4d5e6f>``).
    headline : str, optional
        The verdict's metric: a column (``"ndcg@10"``) or a metric (at its smallest k). Default:
        the first of nDCG, AP, RR asked, else the first metric asked, at the smallest k.
    sections : str or list of str, optional
        The sections shown, and computed (default: every one, the appendix on screen only, so
        that the page prints its main part on three A4 pages; ``"all"``: every one, printed too;
        ``"brief"``: the main part). The
        main part: ``"summary"`` (means with intervals), ``"segments"`` (the headline metric per
        user attribute's group and model), ``"comparison"`` (the figure against the baseline, or
        every pair's letters). The appendix: ``"comparison_table"``, ``"evaluated"`` (the call,
        versions, inputs with hashes, users counted, checks, conventions), ``"pairs"``,
        ``"curves"``, ``"distributions"``, ``"segment_tables"``, ``"folds"``, ``"agreement"``,
        ``"beyond"`` (``train=`` / ``items=``), ``"item_groups"``, ``"examples"``, ``"glossary"``.
    **options
        Any option of :func:`recframe.summary` (:class:`recframe.options.SummaryOptions`). The
        page reads these ones itself:

        - ``truth`` (frame): ground truth, as in :func:`recframe.summary`.
        - ``baseline`` (a value of the model column): the model the others are compared with
          (:func:`recframe.compare`, paired t test with Holm's correction, or the randomization
          test without scipy); needs one model key in ``by``.
        - ``ci`` (float or None): coverage of the intervals of the means. **The page's default
          is 0.95** when ``ci`` is not passed (:func:`recframe.summary`'s is no interval);
          ``ci=None`` passed explicitly means no intervals.
        - ``train``, ``items`` (frames): training interactions and the catalog (the
          beyond-accuracy section; with ``item_group=``, the item groups).

    Returns
    -------
    str
        The page, a complete HTML document.

    Notes
    -----
    Figures are inline SVG (no matplotlib needed); nothing loads from the network. The summary
    is :func:`recframe.summary` with ``ci=``; the rest comes from one :func:`recframe.per_user` frame.

    Examples
    --------
    >>> import recframe
    >>> from recframe.data import load_sample
    >>> recs, truth = load_sample()
    >>> page = recframe.report_page(recs, truth=truth, baseline="popular", score="score", relevance="rating", by="model")
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
    # the default page prints its main part (three A4 pages); sections= asked for prints what it names
    text = page.html(request.title, parts.lead(collected), print_appendix=sections is not None)
    if request.path is not None:
        data.write(request.path, text)
    return text
