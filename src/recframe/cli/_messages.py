"""The command line's messages: exit codes, its own usage errors, and API errors said in
command-line words from the arguments they carry (:class:`recframe.errors.Ref`), not by
rewriting their text."""

from __future__ import annotations

import inspect
import shlex
from typing import Any

from recframe import api
from recframe.conventions import CHOICES
from recframe.errors import RecframeError, Ref

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

#: --check-duplicates CHOICE -> the API's check_duplicates value
CHECK_DUPLICATES: dict[str, bool | str] = {"used": "used", "all": True, "none": False}
#: the options whose values are on and off (the conventions that are yes or no, such as --rr-cutoff)
ON_OFF = frozenset(name for name, values in CHOICES.items() if all(isinstance(value, bool) for value in values))
#: --k when not given: compared by identity, so that `evaluate --format trec` then takes trec_eval's cut-offs
DEFAULT_K = [inspect.signature(api.per_user).parameters["k"].default]  # per_user's, declared there


class UsageError(Exception):
    """Bad usage or input found by the command line itself: exit code 2, message as given."""


def flag(name: str) -> str:
    """The option of API argument `name`: ``score_threshold`` -> ``--score-threshold``."""
    return "--" + name.replace("_", "-")


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return shlex.quote(str(value))


def words(ref: Ref) -> str:
    """How the command line says an API argument reference.

    >>> from recframe.errors import RecframeError, fix, ref
    >>> RecframeError(f"{ref('k', 0)} must be >= 1.", f"pass e.g. {fix('k', [5, 10])}.").say(words)
    '--k 0 must be >= 1. Hint: pass e.g. --k 5,10.'
    >>> RecframeError(f"(the {ref('rank')} argument)", f"pass {fix('user', None)} or {fix('truth', None)}.").say(words)
    '(the --rank argument) Hint: pass --no-user or no --truth.'
    """
    if ref.bare:
        return flag(ref.name)
    if ref.value is None:
        return f"--no-{ref.name}" if ref.name in ("user", "position") else f"no {flag(ref.name)}"
    if ref.name == "checks" and isinstance(ref.value, bool):
        return "--no-checks" if ref.value is False else "no --no-checks"
    if isinstance(ref.value, bool) and ref.name in ON_OFF:
        return f"{flag(ref.name)} {'on' if ref.value else 'off'}"
    if ref.name == "check_duplicates":
        choice = next((c for c, v in CHECK_DUPLICATES.items() if v == ref.value and type(v) is type(ref.value)), ref.value)
        return "--no-check-duplicates" if choice == "none" else f"--check-duplicates {choice}"
    return f"{flag(ref.name)} {_value(ref.value)}"


def cli_words(error: RecframeError) -> str:
    """The message of `error` with its argument references in command-line words."""
    return error.say(words)


def one_line(text: str) -> str:
    return " ".join(text.split())


def polars_message(error: Exception) -> str:
    # Polars appends plan dumps and Python-API advice after a blank line: keep the first paragraph
    return one_line(str(error).split("\n\n")[0]) or type(error).__name__
