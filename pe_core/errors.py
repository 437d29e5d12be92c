"""The one error type for bad input to :mod:`pe_core`, so that a caller can tell a rule that an
argument breaks from a bug (as einops' ``EinopsError`` does)."""

from __future__ import annotations

__all__ = ["InputError", "InputTypeError"]


class InputError(ValueError):
    """An argument breaks one of :mod:`pe_core`'s rules; the message names the argument, states
    the rule and echoes the value.

    A ``ValueError``, so ``except ValueError`` still catches it. Any other exception that leaves
    :mod:`pe_core` is a bug.

    >>> import pe_core
    >>> try:
    ...     pe_core.sinusoidal_encoding(4, 0)
    ... except pe_core.InputError as error:
    ...     print(error)
    d_model must be a positive integer, got 0
    """


class InputTypeError(InputError, TypeError):
    """An argument of the wrong kind (a string where a number is needed): an :class:`InputError`
    that is also a ``TypeError``."""
