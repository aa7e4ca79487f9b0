from __future__ import annotations

import traceback
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pluggy
import pytest
from anyio.abc import TaskGroup
from pydantic import BaseModel

from dsh.base.scope import Scope
from dsh.plugins import hookspecs
from dsh.plugins.context import PluginContext
from dsh.plugins.errors import (
    AmbiguousPlugin,
    MissingPlugin,
    PluginConfigError,
    PluginLoadError,
    PluginNotLoaded,
    PluginUnloadError,
)
from dsh.plugins.loader import PluginLoader
from dsh.plugins.overlay import Overlay, PluginSpec, parse_overlay
from dsh.session.live import LiveSessions
from dsh.testing import FakeClock
from tests.host.fixtures.distributions import PLUGINS, FakeSite
from tests.host.fixtures.plugins import Configured, Recorder

pytestmark = pytest.mark.anyio


@dataclass
class FakeHost:
    """What the Host gives the loader: a PluginManager and a context factory."""

    group: TaskGroup
    scope: Scope = field(default_factory=lambda: Scope("host"))
    clock: FakeClock = field(default_factory=FakeClock)
    contexts: list[PluginContext] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.live = LiveSessions(self.clock)
        self.loader = PluginLoader(self.pm, self.make_context)

    def make_context(self, name: str, config: BaseModel | None) -> PluginContext:
        context = PluginContext(
            name=name,
            config=config,
            scope=self.scope.child(f"plugin {name}"),
            live=self.live,
            clock=self.clock,
            group=self.group,
        )
        self.contexts.append(context)
        return context


@pytest.fixture
async def host() -> AsyncIterator[FakeHost]:
    async with anyio.create_task_group() as group:
        fake = FakeHost(group)
        yield fake
        await fake.loader.aclose()
        await fake.scope.aclose()


def agent(session_id: str) -> Any:
    """An agent stand-in: all an installation needs is a scope and a session id."""
    return SimpleNamespace(
        scope=Scope(f"agent {session_id}"), session=SimpleNamespace(id=session_id)
    )


def overlay(text: str, path: Path = Path("overlays/test/overlay.toml")) -> Overlay:
    return parse_overlay(text, path)


# -- the allowlist --------------------------------------------------------------


async def test_the_default_tree_loads_nothing_even_with_plugins_installed(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("recorder", "Recorder")
    assert "recorder" in [plugin.name for plugin in host.loader.installed()]

    loaded = await host.loader.load_all(Overlay.default().plugins)

    assert loaded == []
    assert dict(host.loader.loaded) == {}
    assert host.pm.get_plugins() == set()


async def test_overlay_plugins_load_in_file_order_under_their_entry_point_names(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("recorder", "Recorder", version="1.2")
    site.plugin("configured", "Configured")
    site.plugin("unused", "Recorder")

    loaded = await host.loader.load_all(
        overlay('[plugins.configured]\ngreeting = "hello"\n\n[plugins.recorder]\n').plugins
    )

    assert [plugin.name for plugin in loaded] == ["configured", "recorder"]
    assert list(host.loader.loaded) == ["configured", "recorder"]
    recorder = host.loader.loaded["recorder"]
    assert (recorder.distribution, recorder.version) == ("dsh-recorder", "1.2")
    assert isinstance(recorder.instance, Recorder)
    assert host.pm.get_plugin("recorder") is recorder.instance
    assert host.pm.get_plugin("unused") is None
    assert recorder.context.name == "recorder"
    assert recorder.context.config is None


# -- configuration --------------------------------------------------------------


async def test_config_is_validated_by_the_plugin_config_model_and_given_in_the_context(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("configured", "Configured")

    loaded = await host.loader.load(
        PluginSpec("configured", config={"greeting": "hello", "retries": 5})
    )

    assert isinstance(loaded.instance, Configured)
    assert loaded.context.config == Configured.Config(greeting="hello", retries=5)


async def test_a_config_error_names_the_overlay_file_the_plugin_and_the_field(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("configured", "Configured")
    spec = overlay('[plugins.configured]\ngreeting = "hi"\nretries = "5"\n').plugins[0]

    with pytest.raises(PluginConfigError) as caught:
        await host.loader.load(spec)

    error = caught.value
    assert error.plugin == "configured"
    assert error.fields == ("plugins.configured.retries",)
    assert str(error).startswith("overlays/test/overlay.toml: invalid config for plugin")
    assert "plugins.configured.retries: Input should be a valid integer" in str(error)
    assert host.contexts == []  # validation happens before the plugin gets a context
    assert dict(host.loader.loaded) == {}


async def test_config_typos_are_errors_because_the_config_model_forbids_extra_keys(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("configured", "Configured")

    with pytest.raises(PluginConfigError) as caught:
        await host.loader.load(PluginSpec("configured", config={"greeting": "hi", "retry": 1}))

    assert caught.value.fields == ("plugins.configured.retry",)
    assert "Extra inputs are not permitted" in str(caught.value)
    assert not str(caught.value).startswith("overlays")  # a spec built in code has no file


async def test_a_plugin_without_config_model_rejects_a_non_empty_table(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("recorder", "Recorder")
    spec = overlay('[plugins.recorder]\ncolour = "red"\n"odd key" = 1\n').plugins[0]

    with pytest.raises(PluginConfigError) as caught:
        await host.loader.load(spec)

    assert caught.value.fields == ("plugins.recorder.colour", 'plugins.recorder."odd key"')
    assert str(caught.value) == (
        "overlays/test/overlay.toml: plugin 'recorder' takes no configuration, but the overlay "
        'sets plugins.recorder.colour, plugins.recorder."odd key"'
    )


@pytest.mark.parametrize(
    ("cls", "problem"),
    [
        ("LaxConfig", "its Config must forbid extra keys"),
        ("ConfigNotAModel", "its Config must be a pydantic model class"),
    ],
)
async def test_a_config_attribute_must_be_a_strict_pydantic_model(
    site: FakeSite, host: FakeHost, cls: str, problem: str
) -> None:
    site.plugin("odd", cls)

    with pytest.raises(PluginLoadError, match=problem) as caught:
        await host.loader.load(PluginSpec("odd"))

    assert "plugin 'odd' (dsh-odd 1.0)" in str(caught.value)


# -- missing and ambiguous plugins -----------------------------------------------


async def test_a_missing_plugin_names_the_conventional_distribution_to_install(
    host: FakeHost,
) -> None:
    spec = overlay("[plugins.tool-nothing]\n").plugins[0]

    with pytest.raises(MissingPlugin) as caught:
        await host.loader.load(spec)

    assert str(caught.value) == (
        "plugin 'tool-nothing' named in overlays/test/overlay.toml is not installed; is the "
        "distribution that ships it (dsh-tool-nothing, by convention) installed in this "
        "environment?"
    )
    assert caught.value.plugin == "tool-nothing"
    assert caught.value.missing == (("tool-nothing", "dsh-tool-nothing"),)


async def test_a_missing_plugin_names_the_distribution_the_overlay_gives(host: FakeHost) -> None:
    with pytest.raises(MissingPlugin) as caught:
        await host.loader.load(PluginSpec("zzyzx", distribution="acme-zzyzx"))

    assert str(caught.value) == (
        "plugin 'zzyzx' is not installed; "
        "is the distribution that ships it (acme-zzyzx) installed in this environment?"
    )


async def test_a_name_close_to_an_installed_plugin_asks_did_you_mean_and_advises_no_install(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("tool-clock", "Recorder", version="0.2")

    with pytest.raises(MissingPlugin) as caught:
        await host.loader.load(PluginSpec("tool-clok"))

    assert str(caught.value) == (
        "plugin 'tool-clok' is not installed; "
        "did you mean 'tool-clock' (installed from dsh-tool-clock 0.2)?"
    )
    assert "install" not in str(caught.value).replace("installed", "")


async def test_an_overlay_with_missing_plugins_names_all_of_them_and_loads_nothing(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("recorder", "Recorder")

    with pytest.raises(MissingPlugin) as caught:
        await host.loader.load_all(
            overlay("[plugins.recorder]\n[plugins.first-gone]\n[plugins.second-gone]\n").plugins
        )

    assert caught.value.missing == (
        ("first-gone", "dsh-first-gone"),
        ("second-gone", "dsh-second-gone"),
    )
    assert len(str(caught.value).splitlines()) == 2
    assert host.contexts == []
    assert dict(host.loader.loaded) == {}


async def test_a_distribution_pin_does_not_match_the_same_name_from_another_distribution(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("recorder", "Recorder", version="3.0")

    with pytest.raises(MissingPlugin) as caught:
        await host.loader.load(PluginSpec("recorder", distribution="acme-recorder"))

    assert str(caught.value) == (
        "plugin 'recorder' is not installed from acme-recorder "
        "(it is installed from dsh-recorder 3.0)"
    )


async def test_two_distributions_with_the_same_plugin_name_need_a_distribution_pin(
    site: FakeSite, host: FakeHost
) -> None:
    site.install("dsh-twin", {"twin": f"{PLUGINS}:Recorder"})
    site.install("acme-twin", {"twin": f"{PLUGINS}:FutureHook"})
    spec = overlay("[plugins.twin]\n").plugins[0]

    with pytest.raises(AmbiguousPlugin) as caught:
        await host.loader.load(spec)

    message = str(caught.value)
    assert "provided by several distributions" in message
    assert "acme-twin 1.0" in message
    assert "dsh-twin 1.0" in message
    assert message.endswith("in [plugins.twin] of overlays/test/overlay.toml")

    pinned = await host.loader.load(PluginSpec("twin", distribution="ACME_Twin"))
    assert pinned.distribution == "acme-twin"


async def test_an_ambiguous_spec_built_in_code_names_no_file(
    site: FakeSite, host: FakeHost
) -> None:
    site.install("dsh-twin", {"twin": f"{PLUGINS}:Recorder"})
    site.install("acme-twin", {"twin": f"{PLUGINS}:Recorder"})

    with pytest.raises(AmbiguousPlugin) as caught:
        await host.loader.load(PluginSpec("twin"))

    assert str(caught.value).endswith("in [plugins.twin]")


# -- failures while loading ------------------------------------------------------


async def test_an_import_error_names_the_plugin_and_distribution_and_keeps_the_traceback(
    site: FakeSite, host: FakeHost
) -> None:
    site.install("dsh-broken", {"broken": "tests.host.fixtures.broken_plugin:Plugin"}, "0.3")

    with pytest.raises(PluginLoadError) as caught:
        await host.loader.load(PluginSpec("broken"))

    error = caught.value
    assert error.plugin == "broken"
    assert str(error).startswith(
        "cannot import plugin 'broken' (dsh-broken 0.3, tests.host.fixtures.broken_plugin:Plugin): "
        "ModuleNotFoundError"
    )
    assert isinstance(error.__cause__, ModuleNotFoundError)
    frames = traceback.extract_tb(error.__cause__.__traceback__)
    assert any(frame.filename.endswith("broken_plugin.py") for frame in frames)
    assert host.contexts == []


async def test_an_entry_point_must_name_a_class(site: FakeSite, host: FakeHost) -> None:
    site.plugin("function", "not_a_class")

    with pytest.raises(PluginLoadError, match="must name a class, not function"):
        await host.loader.load(PluginSpec("function"))


async def test_a_plugin_that_fails_to_start_has_its_scope_closed(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("fragile", "FailsToStart")

    with pytest.raises(PluginLoadError) as caught:
        await host.loader.load(PluginSpec("fragile"))

    assert str(caught.value) == (
        "plugin 'fragile' (dsh-fragile 1.0) failed to start: RuntimeError: cannot start"
    )
    assert isinstance(caught.value.__cause__, RuntimeError)
    (context,) = host.contexts
    assert context.scope.closed
    assert len(host.scope) == 0  # the host scope no longer holds the plugin's scope


async def test_a_failure_to_close_the_scope_of_a_failed_plugin_is_noted_on_the_error(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("fragile", "FailsToStartAndToClose")

    with pytest.raises(PluginLoadError, match="failed to start") as caught:
        await host.loader.load(PluginSpec("fragile"))

    assert any("cannot release" in note for note in caught.value.__notes__)


async def test_an_invalid_hook_implementation_names_the_plugin_and_registers_nothing(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("bad-hook", "BadHookSignature")

    with pytest.raises(PluginLoadError) as caught:
        await host.loader.load(PluginSpec("bad-hook"))

    message = str(caught.value)
    assert message.startswith("plugin 'bad-hook' (dsh-bad-hook 1.0) has an invalid hook")
    assert "colour" in message
    assert isinstance(caught.value.__cause__, pluggy.PluginValidationError)
    assert host.pm.get_plugins() == set()
    assert host.contexts[0].scope.closed


async def test_a_hook_that_dsh_does_not_define_is_rejected(site: FakeSite, host: FakeHost) -> None:
    site.plugin("typo", "MisspelledHook")

    with pytest.raises(PluginLoadError, match="dsh_agent_publishd"):
        await host.loader.load(PluginSpec("typo"))

    assert host.pm.get_plugins() == set()
    assert host.contexts[0].scope.closed


@pytest.mark.parametrize(
    ("cls", "hook"),
    [("WrapsAHook", "dsh_session_state"), ("OldStyleWrapper", "dsh_client_modules")],
)
async def test_a_hook_wrapper_is_refused_naming_the_plugin_and_the_hook(
    site: FakeSite, host: FakeHost, cls: str, hook: str
) -> None:
    site.plugin("wraps", cls)

    with pytest.raises(PluginLoadError) as caught:
        await host.loader.load(PluginSpec("wraps"))

    message = str(caught.value)
    assert message.startswith(f"plugin 'wraps' (dsh-wraps 1.0) implements {hook} as a hook wrapper")
    assert "tryfirst/trylast" in message
    assert caught.value.plugin == "wraps"
    assert host.pm.get_plugins() == set()
    assert host.contexts[0].scope.closed
    assert host.loader.generation == 0


async def test_a_class_loads_like_an_entry_point_with_its_config_checked(host: FakeHost) -> None:
    loaded = await host.loader.load_class(Configured, name="direct", config={"greeting": "hi"})

    assert loaded.instance.context.config == Configured.Config(greeting="hi")
    assert (loaded.name, loaded.distribution, loaded.version) == ("direct", None, None)
    assert host.pm.get_plugin("direct") is loaded.instance
    assert host.loader.generation == 1
    with pytest.raises(PluginConfigError, match=r"plugins\.other\.greeting: Field required"):
        await host.loader.load_class(Configured, name="other")
    with pytest.raises(PluginLoadError, match="already loaded"):
        await host.loader.load_class(Configured, name="direct", config={"greeting": "hi"})
    with pytest.raises(TypeError, match="expected a plugin class"):
        await host.loader.load_class(Configured(SimpleNamespace()), name="x")  # type: ignore[arg-type]

    await host.loader.unload("direct")
    assert host.loader.generation == 2


async def test_a_class_with_a_bad_hook_names_the_class(host: FakeHost) -> None:
    from tests.host.fixtures.plugins import WrapsAHook

    with pytest.raises(PluginLoadError) as caught:
        await host.loader.load_class(WrapsAHook, name="wraps")

    assert str(caught.value).startswith(
        "plugin 'wraps' (class tests.host.fixtures.plugins.WrapsAHook) implements "
    )


async def test_an_optional_hook_for_a_newer_host_is_accepted(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("future", "FutureHook")

    loaded = await host.loader.load(PluginSpec("future"))

    assert host.pm.get_plugin("future") is loaded.instance


async def test_a_name_taken_in_the_plugin_manager_is_a_load_error(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("recorder", "Recorder")
    host.pm.register(object(), name="recorder")

    with pytest.raises(PluginLoadError, match="cannot register plugin 'recorder'"):
        await host.loader.load(PluginSpec("recorder"))

    assert host.contexts[0].scope.closed


async def test_a_blocked_name_is_a_load_error(site: FakeSite, host: FakeHost) -> None:
    site.plugin("recorder", "Recorder")
    host.pm.set_blocked("recorder")

    with pytest.raises(PluginLoadError, match="is blocked"):
        await host.loader.load(PluginSpec("recorder"))


async def test_a_plugin_loads_only_once_per_loader(site: FakeSite, host: FakeHost) -> None:
    site.plugin("recorder", "Recorder")
    first = await host.loader.load(PluginSpec("recorder"))

    with pytest.raises(PluginLoadError, match="already loaded"):
        await host.loader.load(PluginSpec("recorder"))

    assert host.loader.loaded["recorder"] is first
    assert len(host.contexts) == 1


async def test_a_failing_plugin_rolls_back_the_ones_its_overlay_loaded_before_it(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("recorder", "Recorder")
    site.plugin("fragile", "FailsToStart")

    with pytest.raises(PluginLoadError, match="failed to start"):
        await host.loader.load_all(overlay("[plugins.recorder]\n[plugins.fragile]\n").plugins)

    assert dict(host.loader.loaded) == {}
    assert host.pm.get_plugins() == set()
    assert all(context.scope.closed for context in host.contexts)


async def test_a_rollback_that_fails_to_unload_is_noted_on_the_original_error(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("sticky", "FailsToUnload")
    site.plugin("fragile", "FailsToStart")

    with pytest.raises(PluginLoadError, match="failed to start") as caught:
        await host.loader.load_all(overlay("[plugins.sticky]\n[plugins.fragile]\n").plugins)

    assert any("sticky cannot release" in note for note in caught.value.__notes__)
    assert dict(host.loader.loaded) == {}


# -- one instance per host --------------------------------------------------------


async def test_two_hosts_in_one_process_share_no_plugin_instance(site: FakeSite) -> None:
    site.plugin("recorder", "Recorder")
    async with anyio.create_task_group() as group:
        first, second = FakeHost(group), FakeHost(group)
        one = await first.loader.load(PluginSpec("recorder"))
        two = await second.loader.load(PluginSpec("recorder"))

        first.pm.hook.dsh_agent_published(agent=agent("a"))

        assert one.instance is not two.instance
        assert isinstance(one.instance, Recorder)
        assert isinstance(two.instance, Recorder)
        assert [seen.session.id for seen in one.instance.published] == ["a"]
        assert two.instance.published == []
        assert second.pm.get_plugin("recorder") is two.instance
        await first.loader.aclose()
        await second.loader.aclose()


async def test_publication_is_not_historic(site: FakeSite, host: FakeHost) -> None:
    site.plugin("recorder", "Recorder")
    host.pm.hook.dsh_agent_published(agent=agent("early"))

    loaded = await host.loader.load(PluginSpec("recorder"))
    recorder = loaded.instance
    assert isinstance(recorder, Recorder)
    assert recorder.published == []

    host.pm.hook.dsh_agent_published(agent=agent("late"))
    assert [seen.session.id for seen in recorder.published] == ["late"]


# -- unloading ------------------------------------------------------------------


async def test_unload_unwinds_every_installation_awaits_it_and_unregisters_the_hooks(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("recorder", "Recorder")
    loaded = await host.loader.load(PluginSpec("recorder"))
    recorder = loaded.instance
    assert isinstance(recorder, Recorder)
    first, second = agent("first"), agent("second")
    host.pm.hook.dsh_agent_published(agent=first)
    host.pm.hook.dsh_agent_published(agent=second)
    assert (len(first.scope), len(second.scope)) == (1, 1)

    await host.loader.unload("recorder")

    assert sorted(recorder.log) == ["drained first", "drained second"]
    assert loaded.context.scope.closed
    assert (len(first.scope), len(second.scope)) == (0, 0)  # installations detached
    assert not first.scope.closed  # the agents themselves live on
    assert not second.scope.closed
    assert host.pm.get_plugin("recorder") is None
    assert dict(host.loader.loaded) == {}
    host.pm.hook.dsh_agent_published(agent=agent("after"))
    assert [seen.session.id for seen in recorder.published] == ["first", "second"]


async def test_closing_an_agent_unwinds_only_its_own_installation(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("recorder", "Recorder")
    loaded = await host.loader.load(PluginSpec("recorder"))
    recorder = loaded.instance
    assert isinstance(recorder, Recorder)
    first, second = agent("first"), agent("second")
    host.pm.hook.dsh_agent_published(agent=first)
    host.pm.hook.dsh_agent_published(agent=second)

    await first.scope.aclose()

    assert recorder.log == ["drained first"]
    assert not loaded.context.scope.closed
    assert host.loader.loaded["recorder"] is loaded


async def test_unloading_a_plugin_that_is_not_loaded_raises(host: FakeHost) -> None:
    with pytest.raises(PluginNotLoaded, match="'nothing' is not loaded"):
        await host.loader.unload("nothing")


async def test_a_failing_disposer_still_unloads_the_plugin(site: FakeSite, host: FakeHost) -> None:
    site.plugin("sticky", "FailsToUnload")
    loaded = await host.loader.load(PluginSpec("sticky"))

    with pytest.raises(PluginUnloadError, match="'sticky' did not unload cleanly") as caught:
        await host.loader.unload("sticky")

    assert caught.value.plugin == "sticky"
    assert isinstance(caught.value.__cause__, OSError)
    assert loaded.context.scope.closed
    assert host.pm.get_plugin("sticky") is None
    assert dict(host.loader.loaded) == {}


async def test_unload_tolerates_hooks_already_unregistered_elsewhere(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("recorder", "Recorder")
    loaded = await host.loader.load(PluginSpec("recorder"))
    host.pm.unregister(name="recorder")

    await host.loader.unload("recorder")

    assert loaded.context.scope.closed


async def test_aclose_unloads_newest_first_and_then_refuses_to_load(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("one", "Recorder")
    site.plugin("two", "Recorder")
    await host.loader.load_all(overlay("[plugins.one]\n[plugins.two]\n").plugins)
    order: list[str] = []
    for context in host.contexts:
        context.scope.add(lambda name=context.name: order.append(name))

    await host.loader.aclose()

    assert order == ["two", "one"]
    assert host.pm.get_plugins() == set()
    with pytest.raises(PluginLoadError, match="the loader is closed"):
        await host.loader.load(PluginSpec("one"))


async def test_aclose_unloads_every_plugin_even_when_some_fail(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("sticky", "FailsToUnload")
    site.plugin("recorder", "Recorder")
    site.plugin("stuck", "FailsToUnload")
    await host.loader.load_all(
        overlay("[plugins.sticky]\n[plugins.recorder]\n[plugins.stuck]\n").plugins
    )

    with pytest.raises(ExceptionGroup) as caught:
        await host.loader.aclose()

    assert [error.plugin for error in caught.value.exceptions] == ["stuck", "sticky"]
    assert all(context.scope.closed for context in host.contexts)
    assert dict(host.loader.loaded) == {}


async def test_aclose_reraises_a_single_unload_failure_as_is(
    site: FakeSite, host: FakeHost
) -> None:
    site.plugin("sticky", "FailsToUnload")
    await host.loader.load(PluginSpec("sticky"))

    with pytest.raises(PluginUnloadError):
        await host.loader.aclose()
