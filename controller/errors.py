"""The one exception a user can cause: it carries a message that names the fix.

The domain model (`p4incast.model`) raises its own `ModelError` for a setting
it refuses (an unknown ECN mode, K not below the queue). The controller calls
the model only inside `model_errors()`, which turns that into a
ControllerError with the same message, so the CLI catches one type and still
prints one line.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from p4incast.model.errors import ModelError


class ControllerError(Exception):
    """Bad config or argument, unreachable switch, mismatched pipeline, missing tool.

    The CLI prints `str(err)` on one line and exits non-zero; nothing has been
    written to the switch when it is raised during validation.
    """


@contextmanager
def model_errors() -> Generator[None, None, None]:
    """Re-raise a ModelError from the block as a ControllerError (same message)."""
    try:
        yield
    except ModelError as err:
        raise ControllerError(str(err)) from None
