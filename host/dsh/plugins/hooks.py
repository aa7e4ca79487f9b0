"""The one hook caller: every hook the host calls goes through a `Hooks`.

pluggy's own call (`pm.hook.dsh_x(...)`) stops at the first exception, so
one broken plugin would hide every other plugin's contribution. For the
hooks whose specification says failures are contained per plugin, `Hooks`
calls each implementation on its own, in exactly pluggy's order:
`tryfirst` implementations first, `trylast` ones last, and otherwise the
plugin registered last first. A failing implementation is logged (naming
the plugin, the hook and what it was called about) and skipped; so is a
result the hook's caller does not accept (`accept=`).

Wrappers (`wrapper=True`, and the old-style `hookwrapper=True`) are refused
when a plugin loads (`wrapper_hooks`, used by the loader): a wrapper wraps
the call of every other implementation, which containment splits into one
call per plugin, so there would be nothing for it to wrap. Calling
implementations by hand used to skip wrappers silently; now a plugin that
ships one does not load, and the error names the plugin and the hook.

Three ways to call, keyword arguments only (a spec grows only by adding
arguments):

- `each(name, kwargs)`: every implementation, contained; the converted
  non-None results as `Contribution(plugin, value)`s, in call order. `kwargs` may be a
  function of the plugin's name, for hooks that hand each plugin its own
  argument (`dsh_cli_commands`' `register` stamps the plugin's name), and
  `around(plugin)` a context each implementation runs in (`dsh_agent_published`
  runs in `registering_as`, so a failing tool's log line names its plugin).
- `first(name, kwargs)`: the first accepted non-None result (firstresult),
  contained: a failing plugin does not hide the next plugin's answer.

`convert(plugin, value)` checks (and may convert) a result: a `ValueError`
or `TypeError` from it is logged as that plugin's bad result and skipped.
- `call(plugin, name, kwargs)`: the implementation of one plugin (a directed
  hook such as `dsh_session_action`). Its exceptions propagate: the caller
  is answering a request for exactly that plugin. `HookNotImplemented` when
  the plugin is not registered or does not implement the hook.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import pluggy

from .errors import HookNotImplemented

__all__ = ["Contribution", "HookNotImplemented", "Hooks", "wrapper_hooks"]

log = logging.getLogger(__name__)

Kwargs = Mapping[str, Any] | Callable[[str], Mapping[str, Any]]
ErrorHandler = Callable[[str, str, Exception], None]
Converter = Callable[[str, Any], Any]
Around = Callable[[str], AbstractContextManager[object]]


@dataclass(frozen=True, slots=True)
class Contribution:
    """One plugin's accepted result of one hook call."""

    plugin: str
    value: Any


def wrapper_hooks(pm: pluggy.PluginManager, plugin: object) -> list[str]:
    """The hooks that `plugin` (registered in `pm`) implements as a wrapper, sorted."""
    return sorted(
        caller.name
        for caller in pm.get_hookcallers(plugin) or ()
        if any(
            impl.plugin is plugin and (impl.wrapper or impl.hookwrapper)
            for impl in caller.get_hookimpls()
        )
    )


class Hooks:
    """Calls the hooks of one `PluginManager` (see the module docstring)."""

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self._pm = pm

    def each(
        self,
        name: str,
        kwargs: Kwargs,
        *,
        convert: Converter | None = None,
        about: str = "",
        on_error: ErrorHandler | None = None,
        around: Around | None = None,
    ) -> list[Contribution]:
        """Every implementation's converted non-None result, in call order; failures contained.

        `about` is added to log lines (e.g. "for session 3f2a"); `on_error(plugin,
        hook, error)` replaces the log line for a failing implementation;
        `around(plugin)` is a context manager each implementation runs inside.
        """
        found = []
        for impl, value in self._results(name, kwargs, about, on_error, around):
            converted = self._convert(impl, name, value, convert, about)
            if converted is not None:
                found.append(Contribution(impl.plugin_name, converted))
        return found

    def first(
        self,
        name: str,
        kwargs: Kwargs,
        *,
        convert: Converter | None = None,
        about: str = "",
    ) -> Contribution | None:
        """The first converted non-None result in call order, or None; failures contained."""
        for impl, value in self._results(name, kwargs, about, None, None):
            converted = self._convert(impl, name, value, convert, about)
            if converted is not None:
                return Contribution(impl.plugin_name, converted)
        return None

    def call(self, plugin: str, name: str, kwargs: Mapping[str, Any]) -> Any:
        """Call `plugin`'s implementation of hook `name`; its exceptions propagate."""
        registered = self._pm.get_plugin(plugin) is not None
        for impl in self._ordered(name):
            if impl.plugin_name == plugin:
                return _invoke(impl, self._checked(name, kwargs))
        raise HookNotImplemented(plugin, name, registered)

    def implementers(self, name: str) -> list[str]:
        """The plugins implementing hook `name`, in call order."""
        return [impl.plugin_name for impl in self._ordered(name)]

    # -- internals --------------------------------------------------------

    def _ordered(self, name: str) -> list[pluggy.HookImpl]:
        caller: pluggy.HookCaller = getattr(self._pm.hook, name)
        # pluggy keeps implementations in reverse call order and calls them
        # from the end (`tryfirst` are kept last, so they run first).
        return list(reversed(caller.get_hookimpls()))

    def _results(
        self,
        name: str,
        kwargs: Kwargs,
        about: str,
        on_error: ErrorHandler | None,
        around: Around | None,
    ) -> Iterator[tuple[pluggy.HookImpl, Any]]:
        for impl in self._ordered(name):
            arguments = self._checked(
                name, kwargs(impl.plugin_name) if callable(kwargs) else kwargs
            )
            try:
                with nullcontext() if around is None else around(impl.plugin_name):
                    value = _invoke(impl, arguments)
            except Exception as error:
                if on_error is not None:
                    on_error(impl.plugin_name, name, error)
                else:
                    log.exception("plugin %s failed in %s%s", impl.plugin_name, name, _about(about))
                continue
            yield impl, value

    def _convert(
        self,
        impl: pluggy.HookImpl,
        name: str,
        value: Any,
        convert: Converter | None,
        about: str,
    ) -> Any:
        if value is None or convert is None:
            return value
        try:
            return convert(impl.plugin_name, value)
        except (TypeError, ValueError) as error:
            log.error(
                "plugin %s returned a bad result from %s%s (ignored): %s",
                impl.plugin_name,
                name,
                _about(about),
                error,
            )
            return None

    def _checked(self, name: str, kwargs: Mapping[str, Any]) -> Mapping[str, Any]:
        caller: pluggy.HookCaller = getattr(self._pm.hook, name)
        spec = caller.spec
        if spec is None or set(kwargs) != set(spec.argnames):
            expected = () if spec is None else spec.argnames
            raise TypeError(f"{name} takes {', '.join(expected)}; called with {', '.join(kwargs)}")
        return kwargs


def _invoke(impl: pluggy.HookImpl, kwargs: Mapping[str, Any]) -> Any:
    # Like pluggy: an implementation may take a subset of the spec's arguments.
    return impl.function(*(kwargs[argname] for argname in impl.argnames))


def _about(about: str) -> str:
    return f" {about}" if about else ""
