"""Choosing a model adapter: `--model` specs, and each adapter's `[host.NAME]` settings.

A spec is `NAME` or `NAME:ARGUMENT`. `MODEL_CHOICES` maps each name to a
`ModelChoice`: how it is written, a factory that receives the text after the
colon (or `None`) and the adapter's validated settings (or `None`), and the
adapter's own `Settings` model — declared once, by the adapter, and loaded
only when a table needs it. Adding an adapter is one entry, e.g.

    "echo": ModelChoice("echo", no_argument("echo", EchoModel)),

The overlay carries its `[host.NAME]` tables raw; this module validates them
the way the plugin loader validates plugin configs: strictly (unknown keys
and wrong types are errors), each problem located by its TOML key path
(`host.openai.read_timeout`) and prefixed with the overlay file. A table for
an adapter that takes no settings, or for no adapter at all, is an error
too. Every table an overlay holds is checked, not only the chosen model's,
so a typo never waits for the day that model is picked.

Errors are `ValueError`s: `resolve_model` raises one naming the valid choices
for an unknown name or a missing or unexpected argument, `ModelSettingsError`
for bad tables, `ScriptError` for a script file that cannot be used, and the
adapter's own error (`ModelConfigError`) when it cannot be configured.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ValidationError

from ..base.validation import key_path, problems
from .absent import AbsentModel
from .base import ModelAdapter
from .demo import DemoModel
from .errors import ModelSettingsError
from .scripted import ScriptedModel

__all__ = [
    "MODEL_CHOICES",
    "ModelChoice",
    "check_host",
    "check_model",
    "no_argument",
    "resolve_model",
    "validate_settings",
]

Tables = Mapping[str, Mapping[str, Any]]
Build = Callable[[str | None, Any], ModelAdapter]


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One `--model` choice: its usage text, its factory, and its settings model.

    `settings` returns the adapter's `Settings` pydantic model (strict, extra
    keys forbidden); None means the adapter takes no settings. It is a
    function so that an adapter's dependencies load only when needed.
    """

    usage: str
    build: Build
    settings: Callable[[], type[BaseModel]] | None = None


def _refuse_argument(name: str, argument: str | None) -> None:
    if argument is not None:
        raise ValueError(f"model {name!r} takes no argument (got {name}:{argument})")


def no_argument(name: str, factory: Callable[[], ModelAdapter]) -> Build:
    """A factory for a choice that takes neither a `:ARGUMENT` nor settings."""

    def build(argument: str | None, settings: Any) -> ModelAdapter:
        _refuse_argument(name, argument)
        return factory()

    return build


def _openai_settings() -> type[BaseModel]:
    # Imported on demand: httpx costs ~0.15 s of start-up and only this choice needs it.
    from .openai import OpenAISettings

    return OpenAISettings


def _openai(argument: str | None, settings: Any) -> ModelAdapter:
    _refuse_argument("openai", argument)
    from .openai import OpenAIAdapter

    return OpenAIAdapter.from_env(settings)


def _scripted(argument: str | None, settings: Any) -> ModelAdapter:
    if not argument:
        raise ValueError("model 'scripted' needs a script file: --model scripted:PATH")
    return ScriptedModel.from_file(argument)


MODEL_CHOICES: Mapping[str, ModelChoice] = MappingProxyType(
    {
        "demo": ModelChoice("demo", no_argument("demo", DemoModel)),
        "absent": ModelChoice("absent", no_argument("absent", AbsentModel)),
        "scripted": ModelChoice("scripted:PATH", _scripted),
        "openai": ModelChoice("openai", _openai, settings=_openai_settings),
    }
)


def _choices_text(choices: Mapping[str, ModelChoice]) -> str:
    return ", ".join(choice.usage for choice in choices.values())


def check_model(spec: str, choices: Mapping[str, ModelChoice] = MODEL_CHOICES) -> str:
    """Return `spec` if it names a known adapter, else raise `ValueError` listing the choices.

    Only the name before any `:` is checked; the adapter's own argument (such
    as the script of `scripted:PATH`) is checked when it is built. The
    command line's `--model` and the overlay's `[host] model` share this rule.
    """
    name = spec.strip().partition(":")[0]
    if name not in choices:
        raise ValueError(f"unknown model {spec!r}; choose one of: {_choices_text(choices)}")
    return spec


def _table_problems(
    name: str, table: Mapping[str, Any], choices: Mapping[str, ModelChoice]
) -> tuple[BaseModel | None, list[tuple[str, str]]]:
    here = ("host", name)
    choice = choices.get(name)
    if choice is None:
        names = ", ".join(choices)
        return None, [(key_path(here), f"no model adapter is named {name!r} (adapters: {names})")]
    if choice.settings is None:
        keys = ", ".join(key_path((*here, key)) for key in table) or "an empty table"
        return None, [(key_path(here), f"model {name!r} takes no settings (got {keys})")]
    try:
        return choice.settings().model_validate(dict(table), strict=True), []
    except ValidationError as error:
        found = problems(error, location=lambda loc: key_path((*here, *loc)))
        return None, [(item.where, item.message) for item in found]


def validate_settings(
    tables: Tables | None,
    choices: Mapping[str, ModelChoice] = MODEL_CHOICES,
    *,
    source: Path | None = None,
) -> dict[str, BaseModel]:
    """Every `[host.NAME]` table validated by its adapter's `Settings` model.

    Raises `ModelSettingsError` listing every problem of every table.
    """
    validated: dict[str, BaseModel] = {}
    problems: list[tuple[str, str]] = []
    for name, table in (tables or {}).items():
        settings, found = _table_problems(name, table, choices)
        problems.extend(found)
        if settings is not None:
            validated[name] = settings
    if problems:
        raise ModelSettingsError(source, problems)
    return validated


def check_host(
    model: str | None,
    tables: Tables | None,
    choices: Mapping[str, ModelChoice] = MODEL_CHOICES,
    *,
    source: Path | None = None,
) -> None:
    """Check an overlay's `[host] model` and its `[host.NAME]` tables together.

    Raises `ModelSettingsError` listing every problem, each under its key path.
    """
    problems: list[tuple[str, str]] = []
    if model is not None:
        try:
            check_model(model, choices)
        except ValueError as error:
            problems.append(("host.model", str(error)))
    try:
        validate_settings(tables, choices)
    except ModelSettingsError as error:
        problems.extend(error.problems)
    if problems:
        raise ModelSettingsError(source, problems)


def resolve_model(
    spec: str,
    choices: Mapping[str, ModelChoice] = MODEL_CHOICES,
    *,
    settings: Tables | None = None,
    source: Path | None = None,
) -> ModelAdapter:
    """The adapter `spec` names, built with its validated `settings[NAME]` table.

    `settings` are the overlay's raw `[host.NAME]` tables (every one is
    validated); `source` is the overlay file, for error messages. Raises
    `ValueError` listing the valid choices, or naming a bad argument or setting.
    """
    check_model(spec, choices)
    validated = validate_settings(settings, choices, source=source)
    name, colon, argument = spec.strip().partition(":")
    return choices[name].build(argument if colon else None, validated.get(name))
