"""Exceptions raised by recframe, and the argument references their messages are built from.

A message names the arguments it is about through :func:`ref` (the argument at fault, as
``k=0``) and :func:`fix` (a value that would fix it, as ``relevance="rating"``). The error keeps
those references as fields, so the command line can say them in its own words (``--k 0``,
``--relevance rating``) without parsing the text.

>>> error = RecframeError(f"{ref('k', 0)} must be >= 1.", f"pass e.g. {fix('k', [5, 10])}.")
>>> str(error)
'k=0 must be >= 1. Hint: pass e.g. k=[5, 10].'
>>> error.argument, error.value, error.hint
('k', 0, 'pass e.g. k=[5, 10].')
>>> references = [part for part in error.parts if isinstance(part, Ref)]
>>> references[-1]
Ref(name='k', value=[5, 10], text='k=[5, 10]')
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# a reference travels inside the message text between these two characters, which no message
# and no column name shown in one contains, so f-strings can build messages as before
_OPEN, _CLOSE = "\x02", "\x03"
_UNSET: Any = type("Unset", (), {"__repr__": lambda self: "UNSET"})()


@dataclass(frozen=True)
class Ref:
    """A reference to an API argument inside a message: its name, the value shown (:data:`UNSET`
    for the bare argument, ``rank=``) and how Python code would write it (``text``)."""

    name: str
    value: Any
    text: str

    @property
    def bare(self) -> bool:
        return self.value is _UNSET


UNSET = _UNSET


def _encode(name: str, value: Any, text: str) -> str:
    # the value travels as JSON when it can (lists, numbers, strings, None, bools), else as its repr
    if value is _UNSET:
        payload = json.dumps([name, text, "bare", None])
    else:
        try:
            payload = json.dumps([name, text, "exact", value])
        except (TypeError, ValueError):
            payload = json.dumps([name, text, "repr", repr(value)])
    return f"{_OPEN}{payload}{_CLOSE}"


def ref(name: str, value: Any = _UNSET) -> str:
    """The argument `name` at fault in a message: ``name=`` bare, or ``name=<repr of value>``.

    >>> str(RecframeError(f"{ref('truth')} is a pandas frame."))
    'truth= is a pandas frame.'
    """
    return _encode(name, value, f"{name}=" if value is _UNSET else f"{name}={value!r}")


def fix(name: str, value: Any) -> str:
    """A suggested value of argument `name`: as Python code writes it, strings in double quotes.

    >>> str(RecframeError("no rank.", f"pass {fix('rank', 'pos')} or {fix('score', 'p')}."))
    'no rank. Hint: pass rank="pos" or score="p".'
    """
    return _encode(name, value, f"{name}={_code(value)}")


def _code(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_code(v) for v in value) + "]"
    return repr(value)


def _parse(text: str) -> list[str | Ref]:
    parts: list[str | Ref] = []
    for i, chunk in enumerate(text.split(_OPEN)):
        if i == 0:
            parts.append(chunk)
            continue
        payload, _, rest = chunk.partition(_CLOSE)
        name, shown, how, value = json.loads(payload)
        parts.append(Ref(name, _UNSET if how == "bare" else value, shown))
        parts.append(rest)
    return [p for p in parts if p != ""]


class RecframeError(ValueError):
    """Bad arguments or bad data: the message names the argument or column, the value and a fix.

    A subclass of :class:`ValueError`, so ``except ValueError`` also catches it.

    Attributes
    ----------
    problem : str
        What is wrong, in Python's words (``k=0 must be >= 1.``).
    hint : str or None
        How to fix it (the message's text after ``Hint:``).
    argument : str or None
        The first API argument the problem names (``"k"``), or None for a problem in the data.
    value : object
        The value of that argument shown in the message, or :data:`UNSET`.
    parts : list of str and Ref
        The whole message (problem, then ``" Hint: "`` and the hint) with every argument
        reference kept as a :class:`Ref`: :meth:`say` renders it in other words.
    """

    def __init__(self, problem: str, hint: str | None = None) -> None:
        if hint is None and " Hint: " in problem:
            problem, _, hint = problem.partition(" Hint: ")
        problem_parts, hint_parts = _parse(problem), _parse(hint) if hint else []
        self.parts = problem_parts + ([" Hint: ", *hint_parts] if hint else [])
        self.problem = self._python(problem_parts)
        self.hint = self._python(hint_parts) if hint else None
        first = next((p for p in problem_parts if isinstance(p, Ref)), None)
        self.argument = first.name if first else None
        self.value = first.value if first else _UNSET
        super().__init__(self.say(lambda r: r.text))

    @staticmethod
    def _python(parts: list[str | Ref]) -> str:
        return "".join(p.text if isinstance(p, Ref) else p for p in parts)

    def say(self, words: Callable[[Ref], str]) -> str:
        """The message with every argument reference said by ``words(ref)``.

        >>> error = RecframeError(f"{ref('k', 0)} must be >= 1.")
        >>> error.say(lambda r: f"--{r.name} {r.value}")
        '--k 0 must be >= 1.'
        """
        return "".join(words(p) if isinstance(p, Ref) else p for p in self.parts)

    def __reduce__(self) -> tuple[Any, ...]:  # pickles (multiprocessing, Spark) keep the references
        return (_rebuild, (self.say(lambda r: _encode(r.name, r.value, r.text)),))


def _rebuild(message: str) -> RecframeError:
    return RecframeError(message)


class UncheckedDataWarning(UserWarning):
    """A call ran with ``checks=False``: its data checks were off, so a defect in the data
    (a duplicate row, a NaN relevance) gives wrong numbers silently. Issued once per call that
    skipped them, since a result frame carries no record of its call on every engine; silence it
    with ``warnings.filterwarnings("ignore", category=recframe.UncheckedDataWarning)``."""
