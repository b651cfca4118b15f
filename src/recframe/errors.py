"""Exceptions raised by recframe."""

from __future__ import annotations


class RecframeError(ValueError):
    """Bad arguments or bad data: the message names the argument or column, the value and a fix.

    A subclass of :class:`ValueError`, so ``except ValueError`` also catches it.
    """
