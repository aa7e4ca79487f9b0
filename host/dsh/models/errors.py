"""The errors of model adapters and their settings.

CodedError (dsh.base.errors)
└── ModelError                   the model could not answer: 502
ScriptError(ValueError)          a `scripted:PATH` script that cannot be used
ModelSettingsError(ValueError)   `[host.NAME]` tables or a model name that cannot be used
ModelConfigError(ValueError)     an adapter that cannot be configured (what to set)
DshError (dsh.base.errors)
└── ModelChoiceError(ValueError) the model a Host was told to run cannot be built
"""

from __future__ import annotations

from pathlib import Path

from ..base.errors import CodedError, DshError

__all__ = [
    "ModelChoiceError",
    "ModelConfigError",
    "ModelError",
    "ModelSettingsError",
    "ScriptError",
]


class ModelError(CodedError):
    """The model could not answer. `code` is machine-readable, `message` for people."""

    default_status = 502


class ScriptError(ValueError):
    """A model script that cannot be used. The message names the file and the problem."""

    def __init__(self, source: str, problem: str) -> None:
        super().__init__(f"model script {source}: {problem}")
        self.source = source
        self.problem = problem


class ModelSettingsError(ValueError):
    """`[host.NAME]` tables (or a model name) that cannot be used.

    `problems` holds `(key path, message)` pairs; the message has one line per
    problem, each prefixed with the overlay file when it is known.
    """

    def __init__(self, source: Path | None, problems: list[tuple[str, str]]) -> None:
        where = f"{source}: " if source is not None else ""
        super().__init__("\n".join(f"{where}{path}: {message}" for path, message in problems))
        self.source = source
        self.problems = tuple(problems)


class ModelConfigError(ValueError):
    """The adapter cannot be configured; the message says what to set."""


class ModelChoiceError(DshError, ValueError):
    """The model a Host was told to run by name cannot be built when it starts (unknown,
    or refused by its factory); the message says why and lists the choices."""
