"""The one exception a user can cause: it carries a message that names the fix."""


class ControllerError(Exception):
    """Bad config or argument, unreachable switch, mismatched pipeline, missing tool.

    The CLI prints `str(err)` on one line and exits non-zero; nothing has been
    written to the switch when it is raised during validation.
    """
