"""Docstrings that name declared values: a function's docs stand inside it, and the values that
are declared elsewhere (the default k, the registry's metric list, the statistics defaults) are
named in braces there and written in once, at import, so the docs cannot drift from them."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])


def filled(flush_left: bool = False, **values: object) -> Callable[[_F], _F]:
    """A decorator that writes `values` into the function's docstring where it names them in
    braces (``{DEFAULT_K}``); other braces (a dict in an example) stay as written. With
    `flush_left`, the lines after the first lose their common indentation first: the docs
    shown flush left, as numpydoc's Parameters entries of :func:`recframe.options.parameters`
    are inserted (indented) into them."""

    def fill(function: _F) -> _F:
        doc = function.__doc__ or ""
        if flush_left:
            first, _, rest = doc.partition("\n")
            doc = f"{first}\n{textwrap.dedent(rest)}"
        for name, value in values.items():
            doc = doc.replace("{" + name + "}", str(value))
        function.__doc__ = doc
        return function

    return fill
