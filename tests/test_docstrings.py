"""The Examples sections of the docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib
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
