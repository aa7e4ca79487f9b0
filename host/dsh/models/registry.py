"""Choosing a model adapter from a `--model` spec: `demo`, `absent`, `scripted:PATH`, `openai`.

A spec is `NAME` or `NAME:ARGUMENT`. `MODEL_CHOICES` maps each name to a
`ModelChoice` (how it is written, and a factory that receives the text after
the colon, or `None`, and the adapter's settings from the overlay's
`[host.NAME]` table, or an empty mapping). Adding an adapter is one entry, e.g.

    "echo": ModelChoice("echo", no_argument("echo", EchoModel)),

`resolve_model` raises `ValueError` (naming the valid choices) for an unknown
name, a missing or unexpected argument, and — through `ScriptError`, also a
`ValueError` — a script file that cannot be used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .absent import AbsentModel
from .base import ModelAdapter
from .demo import DemoModel
from .scripted import ScriptedModel

__all__ = ["MODEL_CHOICES", "ModelChoice", "ModelSettings", "no_argument", "resolve_model"]

ModelSettings = Mapping[str, Any]
_NO_SETTINGS: ModelSettings = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One `--model` choice: its usage text and its factory."""

    usage: str
    build: Callable[[str | None, ModelSettings], ModelAdapter]


def _refuse_argument(name: str, argument: str | None) -> None:
    if argument is not None:
        raise ValueError(f"model {name!r} takes no argument (got {name}:{argument})")


def _refuse_settings(name: str, settings: ModelSettings) -> None:
    if settings:
        raise ValueError(f"model {name!r} takes no settings (got {sorted(settings)})")


def no_argument(
    name: str, factory: Callable[[], ModelAdapter]
) -> Callable[[str | None, ModelSettings], ModelAdapter]:
    """A factory for a choice that takes neither a `:ARGUMENT` nor settings."""

    def build(argument: str | None, settings: ModelSettings) -> ModelAdapter:
        _refuse_argument(name, argument)
        _refuse_settings(name, settings)
        return factory()

    return build


def _openai(argument: str | None, settings: ModelSettings) -> ModelAdapter:
    _refuse_argument("openai", argument)
    # Imported on demand: httpx costs ~0.15 s of start-up and only this choice needs it.
    from .openai import OpenAIAdapter

    return OpenAIAdapter.from_env(settings)


def _scripted(argument: str | None, settings: ModelSettings) -> ModelAdapter:
    _refuse_settings("scripted", settings)
    if not argument:
        raise ValueError("model 'scripted' needs a script file: --model scripted:PATH")
    return ScriptedModel.from_file(argument)


MODEL_CHOICES: Mapping[str, ModelChoice] = MappingProxyType(
    {
        "demo": ModelChoice("demo", no_argument("demo", DemoModel)),
        "absent": ModelChoice("absent", no_argument("absent", AbsentModel)),
        "scripted": ModelChoice("scripted:PATH", _scripted),
        "openai": ModelChoice("openai", _openai),
    }
)


def resolve_model(
    spec: str,
    choices: Mapping[str, ModelChoice] = MODEL_CHOICES,
    *,
    settings: Mapping[str, ModelSettings] | None = None,
) -> ModelAdapter:
    """The adapter `spec` names, built with `settings[NAME]` (the overlay's `[host.NAME]`).

    Raises `ValueError` listing the valid choices, or naming a bad argument or setting.
    """
    name, colon, argument = spec.strip().partition(":")
    choice = choices.get(name)
    if choice is None:
        valid = ", ".join(choice.usage for choice in choices.values())
        raise ValueError(f"unknown model {spec!r}; choose one of: {valid}")
    return choice.build(argument if colon else None, (settings or {}).get(name, _NO_SETTINGS))
