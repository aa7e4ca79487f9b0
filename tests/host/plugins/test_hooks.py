"""The one hook caller: pluggy's order, containment per plugin, directed calls."""

from __future__ import annotations

from typing import Any

import pluggy
import pytest

from dsh import hookimpl
from dsh.plugins import hookspecs
from dsh.plugins.errors import HookNotImplemented
from dsh.plugins.hooks import Hooks, wrapper_hooks


def manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


class Plain:
    def __init__(self, name: str, calls: list[str]) -> None:
        self.name = name
        self.calls = calls

    @hookimpl
    def dsh_session_state(self, session: Any) -> Any:
        self.calls.append(self.name)
        return {"from": self.name}


class First(Plain):
    @hookimpl(tryfirst=True)
    def dsh_session_state(self, session: Any) -> Any:
        self.calls.append(self.name)
        return {"from": self.name}


class Last(Plain):
    @hookimpl(trylast=True)
    def dsh_session_state(self, session: Any) -> Any:
        self.calls.append(self.name)
        return {"from": self.name}


class Failing:
    @hookimpl
    def dsh_session_state(self, session: Any) -> Any:
        raise RuntimeError("state is broken")


class Silent:
    @hookimpl
    def dsh_session_state(self, session: Any) -> Any:
        return None


def test_each_calls_in_pluggy_order_tryfirst_then_newest_then_trylast() -> None:
    pm = manager()
    calls: list[str] = []
    pm.register(Last("last", calls), name="last")
    pm.register(First("first", calls), name="first")
    pm.register(Plain("older", calls), name="older")
    pm.register(Plain("newer", calls), name="newer")

    found = Hooks(pm).each("dsh_session_state", {"session": None})

    assert calls == ["first", "newer", "older", "last"]
    assert [item.plugin for item in found] == calls
    # pluggy itself agrees on the order
    calls.clear()
    pm.hook.dsh_session_state(session=None)
    assert calls == ["first", "newer", "older", "last"]


def test_each_contains_a_failing_plugin_and_leaves_out_none(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pm = manager()
    calls: list[str] = []
    pm.register(Plain("kept", calls), name="kept")
    pm.register(Silent(), name="silent")
    pm.register(Failing(), name="failing")

    found = Hooks(pm).each("dsh_session_state", {"session": None}, about="for session s1")

    assert [(item.plugin, item.value) for item in found] == [("kept", {"from": "kept"})]
    assert "plugin failing failed in dsh_session_state for session s1" in caplog.text
    assert "state is broken" in caplog.text


def test_an_error_handler_hears_of_failures_instead_of_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pm = manager()
    pm.register(Failing(), name="failing")
    heard: list[tuple[str, str, str]] = []

    Hooks(pm).each(
        "dsh_session_state",
        {"session": None},
        on_error=lambda plugin, hook, error: heard.append((plugin, hook, str(error))),
    )

    assert heard == [("failing", "dsh_session_state", "state is broken")]
    assert caplog.text == ""


def test_a_converter_checks_results_and_a_bad_one_is_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pm = manager()
    calls: list[str] = []
    pm.register(Plain("a", calls), name="a")
    pm.register(Plain("b", calls), name="b")

    def only_a(plugin: str, value: Any) -> Any:
        if plugin != "a":
            raise ValueError(f"{plugin} is not welcome")
        return {**value, "checked": True}

    found = Hooks(pm).each("dsh_session_state", {"session": None}, convert=only_a)

    assert [item.value for item in found] == [{"from": "a", "checked": True}]
    assert "plugin b returned a bad result from dsh_session_state (ignored): b is not welcome" in (
        caplog.text
    )


def test_first_returns_the_first_good_answer_past_failures() -> None:
    pm = manager()
    calls: list[str] = []
    pm.register(Plain("answer", calls), name="answer")
    pm.register(Silent(), name="silent")
    pm.register(Failing(), name="failing")
    hooks = Hooks(pm)

    found = hooks.first("dsh_session_state", {"session": None})

    assert found is not None and (found.plugin, found.value) == ("answer", {"from": "answer"})

    def refuse(plugin: str, value: Any) -> Any:
        raise TypeError("no")

    assert hooks.first("dsh_session_state", {"session": None}, convert=refuse) is None


def test_kwargs_may_be_made_per_plugin() -> None:
    pm = manager()
    seen: list[tuple[str, str]] = []

    class Takes:
        def __init__(self, name: str) -> None:
            self.name = name

        @hookimpl
        def dsh_cli_commands(self, register: Any) -> None:
            seen.append((self.name, register))

    pm.register(Takes("one"), name="one")
    pm.register(Takes("two"), name="two")

    Hooks(pm).each("dsh_cli_commands", lambda plugin: {"register": f"for {plugin}"})

    assert seen == [("two", "for two"), ("one", "for one")]


def test_an_implementation_may_take_a_subset_of_the_arguments() -> None:
    pm = manager()

    class NoArguments:
        @hookimpl
        def dsh_session_state(self) -> Any:
            return "fine"

    pm.register(NoArguments(), name="bare")

    assert [item.value for item in Hooks(pm).each("dsh_session_state", {"session": 1})] == ["fine"]


def test_calling_with_the_wrong_arguments_is_the_host_s_bug_not_contained() -> None:
    pm = manager()
    pm.register(Silent(), name="silent")

    with pytest.raises(TypeError, match="dsh_session_state takes session; called with log"):
        Hooks(pm).each("dsh_session_state", {"log": None})


def test_call_reaches_only_the_named_plugin_and_lets_its_errors_through() -> None:
    pm = manager()
    calls: list[str] = []
    pm.register(Plain("mine", calls), name="mine")
    pm.register(Plain("other", calls), name="other")
    pm.register(Failing(), name="failing")
    pm.register(object(), name="bystander")
    hooks = Hooks(pm)

    assert hooks.call("mine", "dsh_session_state", {"session": None}) == {"from": "mine"}
    assert calls == ["mine"]
    with pytest.raises(RuntimeError, match="state is broken"):
        hooks.call("failing", "dsh_session_state", {"session": None})
    with pytest.raises(HookNotImplemented, match="'bystander' does not implement it") as caught:
        hooks.call("bystander", "dsh_session_state", {"session": None})
    assert caught.value.registered
    with pytest.raises(HookNotImplemented, match="'ghost' is not loaded"):
        hooks.call("ghost", "dsh_session_state", {"session": None})
    assert hooks.implementers("dsh_session_state") == ["failing", "other", "mine"]


def test_wrappers_of_both_styles_are_found() -> None:
    pm = manager()

    class Wraps:
        @hookimpl(wrapper=True)
        def dsh_session_state(self, session: Any) -> Any:
            return (yield)

        @hookimpl(hookwrapper=True)
        def dsh_client_modules(self) -> Any:
            yield

        @hookimpl
        def dsh_agent_published(self, agent: Any) -> None: ...

    plugin = Wraps()
    pm.register(plugin, name="wraps")

    assert wrapper_hooks(pm, plugin) == ["dsh_client_modules", "dsh_session_state"]
    assert wrapper_hooks(pm, Silent()) == []
