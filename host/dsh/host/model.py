"""`OwnedModel`: the model adapter a Host runs, from being given until it is closed.

A Host is given an adapter, or a `ModelSpec` naming one. An adapter is
attached to the Host at once (`attach(context)`, when it has one: the demo
learns its plugins' skills that way). A spec is resolved when the Host's
plugins are loaded (`resolve`), since a plugin may offer it (`dsh_models`);
until then `adapter` is an `AbsentModel` that no agent ever calls. The Host
owns the adapter: `aclose` closes it (an adapter with an `aclose()` method,
say a connection pool).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..base.scope import dispose
from ..models.absent import AbsentModel
from ..models.base import ModelAdapter
from ..models.errors import ModelChoiceError
from ..models.registry import ModelChoice, ModelContext, ModelSpec, resolve_model

__all__ = ["OwnedModel"]


class OwnedModel:
    """One Host's model adapter (see the module docstring)."""

    def __init__(
        self, given: ModelAdapter | ModelSpec, context: Callable[[], ModelContext]
    ) -> None:
        self._context = context
        self._spec = given if isinstance(given, ModelSpec) else None
        self.adapter: ModelAdapter = AbsentModel() if isinstance(given, ModelSpec) else given
        attach = getattr(self.adapter, "attach", None)
        if self._spec is None and attach is not None:
            attach(context())

    def resolve(self, choices: Callable[[], Mapping[str, ModelChoice]]) -> None:
        """Build the adapter a spec names from `choices()` (built in and the plugins');
        nothing for an adapter given as such. Raises `ModelChoiceError` saying why not."""
        if self._spec is not None:
            spec, self._spec = self._spec, None
            try:
                self.adapter = resolve_model(
                    spec.spec,
                    choices(),
                    settings=spec.settings,
                    source=spec.source,
                    context=self._context(),
                )
            except ValueError as error:
                raise ModelChoiceError(str(error)) from error

    async def aclose(self) -> None:
        close = getattr(self.adapter, "aclose", None)
        if close is not None:
            await dispose(close)
