"""The Examples sections of the docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil

import pytest

import recframe

MODULES = sorted(m.name for m in pkgutil.walk_packages(recframe.__path__, "recframe."))


@pytest.mark.parametrize("name", ["recframe", *MODULES])
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_the_api_examples_ran():
    attempted = sum(doctest.testmod(importlib.import_module(m)).attempted for m in ("recframe.api", "recframe.data"))
    assert attempted >= 8


def _sections(doc: str) -> dict[str, list[str]]:
    """numpydoc sections: a title line underlined with dashes, then its lines."""
    lines = inspect.cleandoc(doc).splitlines()
    out: dict[str, list[str]] = {}
    current = "Summary"
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"} and len(lines[i + 1].strip()) == len(line.strip()):
            current = line.strip()
            out[current] = []
        elif not (set(line.strip()) == {"-"} and i > 0 and current == lines[i - 1].strip()):
            out.setdefault(current, []).append(line)
    return out


def _documented(lines: list[str]) -> list[str]:
    """The parameter names of a Parameters section (entries at the section's indent)."""
    names: list[str] = []
    for line in lines:
        if line and not line.startswith(" "):
            head = line.split(" : ")[0].rstrip("\\").strip()  # curve's list ends a line with a backslash
            names += [n.strip() for n in head.split(",") if n.strip()]
    return names


PUBLIC = [
    recframe.per_user, recframe.summary, recframe.curve, recframe.compare, recframe.report,
    recframe.read_trec_run, recframe.read_trec_qrels, recframe.trec.trec_eval_text,
]  # fmt: skip


@pytest.mark.parametrize("function", PUBLIC, ids=lambda f: f.__name__)
def test_parameters_sections_match_the_signatures(function):
    """numpydoc structure: a Parameters section documenting exactly the signature's parameters,
    in order, and Returns holding no parameter entries (as summary's ci once sat there)."""
    sections = _sections(function.__doc__)
    params = list(inspect.signature(function).parameters)
    if params and params[-1] == "options":  # **options: Unpack[...]: the options declared there
        annotation = str(inspect.signature(function).parameters["options"].annotation)
        declared = {
            "Unpack[Options]": recframe.options.PER_USER_NAMES,
            "Unpack[IntervalOptions]": recframe.options.CURVE_NAMES,
            "Unpack[SummaryOptions]": recframe.options.SUMMARY_NAMES,
        }
        params = [*params[:-1], *declared[annotation]]
    assert _documented(sections.get("Parameters", [])) == params
    assert not set(_documented(sections.get("Returns", [])[1:])) & set(params), "a parameter is documented under Returns"
