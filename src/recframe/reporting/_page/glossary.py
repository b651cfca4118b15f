"""The page's glossary, generated from the metrics' own documentation: each metric's formula is
its bullet in the docstring of its module of :mod:`recframe.metrics` (or, for the accuracy
metrics, in the Notes of :func:`recframe.summary`), and what the registry declares of it (which
direction is better, which users it counts, what it needs). No HTML here: the section renders it."""

from __future__ import annotations

import functools
import importlib
import re

from recframe.api import summary
from recframe.engine import _tables
from recframe.metrics import REGISTRY

#: the modules of recframe.metrics whose docstrings document their metrics, one bullet each
MODULES = ("set_based", "rank_based", "gain_based", "beyond", "ir", "item_groups")
#: who a user-level metric counts, by its registry entry's ``defined``
COUNTED = {
    "relevant": "counts the users with a relevant item (empty_users decides the others)",
    "always": "defined for every user (0 without a hit); users without a relevant item are left out by empty_users",
    "ranked": "counts the users with a recommended list (a property of the list, relevant items or not)",
    "graded": "counts the users with a relevant item (under gain_threshold='positive': an item graded above 0)",
}
#: what a side input gives a metric
NEEDS = {
    "train": "train=",
    "items": "items=",
    "item_features": "item_features=",
    "baseline": "baseline=",
    "catalog": "the catalog (items=, else the items of train=)",
}


def _bullets(doc: str) -> list[str]:
    """The bullets ("- ...", continued on the lines below) of a docstring, each as one line."""
    found: list[str] = []
    within = False  # (the line before is part of a bullet)
    for line in doc.splitlines():
        text = line.strip()
        if text.startswith("- "):
            found.append(text[2:])
            within = True
        elif within and text and not text.startswith(">>>"):
            found[-1] += " " + text
        else:
            within = False
    return found


@functools.cache
def formulas() -> dict[str, str]:
    """metric name: the bullet documenting it (its module's docstring first, then summary's Notes)."""
    found: dict[str, str] = {}
    for module in MODULES:
        for bullet in _bullets(importlib.import_module(f"recframe.metrics.{module}").__doc__ or ""):
            # the names the bullet defines: those before its first "=", and any written as
            # "``name`` = ..." or "``name`` their ..." further on (set_recall, rbp_residual@k)
            defined = re.findall(r"``([a-z0-9_]+?)(?:_X)?(?:@k)?``", bullet.split("=")[0])
            defined += re.findall(r"``([a-z0-9_]+?)(?:_X)?(?:@k)?``\s*(?:=|their\b)", bullet)
            for name in defined:
                found.setdefault(name.removesuffix("_X"), bullet)
    notes = (summary.__doc__ or "").partition("Notes")[2].partition("Examples")[0]
    for bullet in _bullets(notes):
        for name in re.findall(r"^([a-z0-9_]+)(?:@k)?\b", bullet):
            found.setdefault(name, bullet)
    return {name: text.replace("``", "") for name, text in found.items() if name in REGISTRY}


def entries(columns: list[str]) -> list[tuple[str, str, str]]:
    """(metric name, formula, what the registry declares) of the metrics of `columns`, in order."""
    names = list(dict.fromkeys(name for c in columns for name in [_tables.metric_of(c)] if name is not None))
    out = []
    for name in names:
        metric = REGISTRY[name]
        facts = ["higher is better" if metric.higher_is_better else "lower is better"]
        if metric.level == "group":
            facts.append("one value per model (group), from all its lists: not a mean over users")
        else:
            facts.append(COUNTED[metric.defined])
        if metric.requires:
            facts.append("needs " + " and ".join(NEEDS.get(r, r) for r in metric.requires))
        formula = formulas().get(name, f"documented in recframe.metrics (the IR toolbox): {name}")
        out.append((name, formula, "; ".join(facts) + "."))
    return out
