"""Choosing a model adapter: `--model` specs, and each adapter's `[host.NAME]` settings.

A spec is `NAME` or `NAME:ARGUMENT`. `MODEL_CHOICES` maps each built-in name
to a `ModelChoice`: how it is written, a factory that receives the text after
the colon (or `None`), the adapter's validated settings (or `None`) and a
`ModelContext` (what it may use of the Host), and the adapter's own
`Settings` model — declared once, by the adapter, and loaded only when a
table needs it. Adding a built-in adapter is one entry, e.g.

    "echo": ModelChoice("echo", no_argument("echo", EchoModel)),

Plugins add adapters the same way through `dsh_models(register)`; a Host
given a `ModelSpec` that names one resolves it once its plugins are loaded
(`dsh.plugins.contributions.Contributions.model_choices`). Where the set of
plugins is not known yet, `check_model`/`check_host` with `plugins=True`
leave a name that is not built in (and its table) for the Host to check.

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

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ValidationError

from ..base.clock import Clock, SystemClock
from ..base.validation import key_path, problems
from .absent import AbsentModel
from .base import ModelAdapter
from .demo import DemoModel, DemoSkill
from .errors import ModelSettingsError
from .scripted import ScriptedModel

__all__ = [
    "MODEL_CHOICES",
    "ModelChoice",
    "ModelContext",
    "ModelRegistrations",
    "ModelSpec",
    "check_host",
    "check_model",
    "no_argument",
    "resolve_model",
    "validate_settings",
]

log = logging.getLogger(__name__)
Tables = Mapping[str, Mapping[str, Any]]
#: What a model's name may be (a plugin's too): the form of a `--model` word.
_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")


@dataclass(frozen=True, slots=True)
class ModelContext:
    """What a model factory may use of the Host that builds the adapter: its `clock`,
    and `demo_skills`, the skills its loaded plugins teach the demo model (None: not
    known yet; an adapter built without a Host learns them when it is attached to one)."""

    clock: Clock = field(default_factory=SystemClock)
    demo_skills: Callable[[], Sequence[DemoSkill]] | None = None


Build = Callable[[str | None, Any, ModelContext], ModelAdapter]


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A `--model` spec with the overlay's `[host.NAME]` tables, for a Host to resolve
    once its plugins are loaded (a name a plugin offers; see the module docstring)."""

    spec: str
    settings: Tables | None = None
    source: Path | None = None

    @property
    def name(self) -> str:
        return self.spec.strip().partition(":")[0]


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
    plugin: str | None = None  # the plugin that offers it; None: built in


def _refuse_argument(name: str, argument: str | None) -> None:
    if argument is not None:
        raise ValueError(f"model {name!r} takes no argument (got {name}:{argument})")


def no_argument(name: str, factory: Callable[[], ModelAdapter]) -> Build:
    """A factory for a choice that takes neither a `:ARGUMENT` nor settings."""

    def build(argument: str | None, settings: Any, context: ModelContext) -> ModelAdapter:
        _refuse_argument(name, argument)
        return factory()

    return build


def _demo(argument: str | None, settings: Any, context: ModelContext) -> ModelAdapter:
    _refuse_argument("demo", argument)
    return DemoModel(context.clock, skills=context.demo_skills)


def _openai_settings() -> type[BaseModel]:
    # Imported on demand: httpx costs ~0.15 s of start-up and only this choice needs it.
    from .openai import OpenAISettings

    return OpenAISettings


def _openai(argument: str | None, settings: Any, context: ModelContext) -> ModelAdapter:
    _refuse_argument("openai", argument)
    from .openai import OpenAIAdapter

    return OpenAIAdapter.from_env(settings)


def _scripted(argument: str | None, settings: Any, context: ModelContext) -> ModelAdapter:
    if not argument:
        raise ValueError("model 'scripted' needs a script file: --model scripted:PATH")
    return ScriptedModel.from_file(argument)


MODEL_CHOICES: Mapping[str, ModelChoice] = MappingProxyType(
    {
        "demo": ModelChoice("demo", _demo),
        "absent": ModelChoice("absent", no_argument("absent", AbsentModel)),
        "scripted": ModelChoice("scripted:PATH", _scripted),
        "openai": ModelChoice("openai", _openai, settings=_openai_settings),
    }
)


def _choices_text(choices: Mapping[str, ModelChoice]) -> str:
    return ", ".join(choice.usage for choice in choices.values())


def check_model(
    spec: str, choices: Mapping[str, ModelChoice] = MODEL_CHOICES, *, plugins: bool = False
) -> str:
    """Return `spec` if it names a known adapter, else raise `ValueError` listing the choices.

    Only the name before any `:` is checked; the adapter's own argument (such
    as the script of `scripted:PATH`) is checked when it is built. The
    command line's `--model` and the overlay's `[host] model` share this rule.
    With `plugins`, a well-formed name that is not among `choices` passes: a
    plugin may offer it, and the Host checks once its plugins are loaded.
    """
    name = spec.strip().partition(":")[0]
    if name not in choices and not (plugins and _NAME.fullmatch(name)):
        raise ValueError(f"unknown model {spec!r}; choose one of: {_choices_text(choices)}")
    return spec


def _table_problems(
    name: str, table: Mapping[str, Any], choices: Mapping[str, ModelChoice], plugins: bool
) -> tuple[BaseModel | None, list[tuple[str, str]]]:
    here = ("host", name)
    choice = choices.get(name)
    if choice is None and plugins:
        return None, []  # a plugin's adapter, perhaps: the Host checks it
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
    plugins: bool = False,
) -> dict[str, BaseModel]:
    """Every `[host.NAME]` table validated by its adapter's `Settings` model (with
    `plugins`, a table for no adapter among `choices` is left for the Host).

    Raises `ModelSettingsError` listing every problem of every table.
    """
    validated: dict[str, BaseModel] = {}
    problems: list[tuple[str, str]] = []
    for name, table in (tables or {}).items():
        settings, found = _table_problems(name, table, choices, plugins)
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
    plugins: bool = False,
) -> None:
    """Check an overlay's `[host] model` and its `[host.NAME]` tables together
    (`plugins`: the overlay loads plugins, which may offer more adapters).

    Raises `ModelSettingsError` listing every problem, each under its key path.
    """
    problems: list[tuple[str, str]] = []
    if model is not None:
        try:
            check_model(model, choices, plugins=plugins)
        except ValueError as error:
            problems.append(("host.model", str(error)))
    try:
        validate_settings(tables, choices, plugins=plugins)
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
    context: ModelContext | None = None,
    plugins: bool = False,
) -> ModelAdapter:
    """The adapter `spec` names, built with its validated `settings[NAME]` table.

    `settings` are the overlay's raw `[host.NAME]` tables (every one is
    validated); `source` is the overlay file, for error messages; `context`
    what the adapter may use of its Host (default: a system clock, no demo
    skills); `plugins` leaves the tables of adapters not among `choices` to
    the Host that knows its plugins' (`validate_settings`). Raises `ValueError`
    listing the valid choices, or naming a bad argument or setting.
    """
    check_model(spec, choices)
    validated = validate_settings(settings, choices, source=source, plugins=plugins)
    name, colon, argument = spec.strip().partition(":")
    build = choices[name].build
    return build(argument if colon else None, validated.get(name), context or ModelContext())


class ModelRegistrations:
    """The adapters plugins offer (`dsh_models`), collected one plugin at a time.

    `register_for(plugin)` is the `register` callback that plugin gets: it
    stamps the plugin's name on each `ModelChoice` and refuses bad input at
    once (`TypeError`, or `ValueError` for a name that is malformed, built in,
    or taken by another plugin). A plugin whose hook raised (`failed`) offers
    none of its adapters. `choices()` is the built-in choices, then these.
    """

    def __init__(self, builtin: Mapping[str, ModelChoice] = MODEL_CHOICES) -> None:
        self._builtin = builtin
        self._offered: dict[str, ModelChoice] = {}
        self._failed: set[str] = set()

    def register_for(self, plugin: str) -> Callable[..., None]:
        """The `register(name, build, *, usage=None, settings=None)` callback for `plugin`."""

        def register(
            name: str,
            build: Build,
            *,
            usage: str | None = None,
            settings: Callable[[], type[BaseModel]] | None = None,
        ) -> None:
            what = f"plugin {plugin!r}: register"
            if not isinstance(name, str) or not _NAME.fullmatch(name):
                raise ValueError(
                    f"{what}: {name!r} is not a model name (a lowercase letter, then lowercase "
                    "letters, digits, '_' or '-'; at most 32)"
                )
            if not callable(build) or (settings is not None and not callable(settings)):
                raise TypeError(f"{what}: build (and settings, when given) must be callable")
            if usage is not None and not isinstance(usage, str):
                raise TypeError(f"{what}: usage must be a str, not {type(usage).__name__}")
            if name in self._builtin:
                raise ValueError(f"{what}: {name!r} is a built-in model")
            taken = self._offered.get(name)
            if taken is not None:
                raise ValueError(f"{what}: plugin {taken.plugin!r} registered {name!r} first")
            self._offered[name] = ModelChoice(usage or name, build, settings, plugin)

        return register

    def failed(self, plugin: str, hook: str, error: Exception) -> None:
        """`plugin`'s hook raised: it offers none of its adapters (logged)."""
        self._failed.add(plugin)
        reason = f"{type(error).__name__}: {error}"
        log.error("plugin %s offers no model: %s failed: %s", plugin, hook, reason)

    def choices(self) -> Mapping[str, ModelChoice]:
        offered = {
            name: choice
            for name, choice in self._offered.items()
            if choice.plugin not in self._failed
        }
        return MappingProxyType({**self._builtin, **offered})
