"""Choosing a model adapter from a `--model` spec: `demo`, `absent`, `scripted:PATH`.

A spec is `NAME` or `NAME:ARGUMENT`. `MODEL_CHOICES` maps each name to a
`ModelChoice` (how it is written, and a factory that receives the text after
the colon, or `None`). Adding an adapter is one entry, e.g.

    "openai": ModelChoice("openai", no_argument("openai", OpenAIModel.from_environment)),

`resolve_model` raises `ValueError` (naming the valid choices) for an unknown
name, a missing or unexpected argument, and — through `ScriptError`, also a
`ValueError` — a script file that cannot be used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from .absent import AbsentModel
from .base import ModelAdapter
from .demo import DemoModel
from .scripted import ScriptedModel

__all__ = ["MODEL_CHOICES", "ModelChoice", "no_argument", "resolve_model"]


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One `--model` choice: its usage text and its factory."""

    usage: str
    build: Callable[[str | None], ModelAdapter]


def no_argument(
    name: str, factory: Callable[[], ModelAdapter]
) -> Callable[[str | None], ModelAdapter]:
    """A factory for a choice that takes no `:ARGUMENT`."""

    def build(argument: str | None) -> ModelAdapter:
        if argument is not None:
            raise ValueError(f"model {name!r} takes no argument (got {name}:{argument})")
        return factory()

    return build


def _openai() -> ModelAdapter:
    # openai adapter entry (added by the openai-adapter helper). Imported on demand:
    # httpx costs ~0.15 s of startup and only this choice needs it.
    from .openai import OpenAIAdapter

    return OpenAIAdapter.from_env()


def _scripted(argument: str | None) -> ModelAdapter:
    if not argument:
        raise ValueError("model 'scripted' needs a script file: --model scripted:PATH")
    return ScriptedModel.from_file(argument)


MODEL_CHOICES: Mapping[str, ModelChoice] = MappingProxyType(
    {
        "demo": ModelChoice("demo", no_argument("demo", DemoModel)),
        "absent": ModelChoice("absent", no_argument("absent", AbsentModel)),
        "scripted": ModelChoice("scripted:PATH", _scripted),
        "openai": ModelChoice("openai", no_argument("openai", _openai)),
    }
)


def resolve_model(spec: str, choices: Mapping[str, ModelChoice] = MODEL_CHOICES) -> ModelAdapter:
    """The adapter `spec` names; raises `ValueError` listing the valid choices."""
    name, colon, argument = spec.strip().partition(":")
    choice = choices.get(name)
    if choice is None:
        valid = ", ".join(choice.usage for choice in choices.values())
        raise ValueError(f"unknown model {spec!r}; choose one of: {valid}")
    return choice.build(argument if colon else None)
