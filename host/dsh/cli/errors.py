"""The errors of the `dsh` command line.

    CommandError     an expected failure: `dsh: error: <message>`, exit status `code`
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["EXIT_FAILURE", "CommandError"]

EXIT_FAILURE = 1


class CommandError(Exception):
    """An expected failure: printed as `dsh: error: <message>` with exit code `code`.

    `problems`, when given, are several separate problems: each is printed as
    its own `dsh: error: ...` line (the message is their lines joined).
    """

    def __init__(
        self, message: str, code: int = EXIT_FAILURE, *, problems: Sequence[str] = ()
    ) -> None:
        super().__init__(message)
        self.code = code
        self.problems = tuple(problems)
