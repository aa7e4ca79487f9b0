"""Tests for plugins/client-ui-schedule/src/dsh_client_ui_schedule/plugin.py."""

from __future__ import annotations

import re

import anyio
import importlib_metadata
import pluggy
import pytest
from anyio.abc import TaskGroup

import dsh_client_ui_schedule
from dsh import ClientModule, LiveSessions, PluginContext, Scope
from dsh.plugins import hookspecs
from dsh.testing import FakeClock
from dsh_client_ui_schedule.plugin import EVENT_TYPES, IMPORTS, MODULE_PATH, ScheduleUiPlugin

pytestmark = pytest.mark.anyio

PLUGIN_NAME = "client-ui-schedule"


def new_context(group: TaskGroup) -> PluginContext:
    """A fresh `PluginContext`, built the way the loader builds one per plugin instance."""
    clock = FakeClock()
    return PluginContext(
        name=PLUGIN_NAME,
        config=None,
        scope=Scope(PLUGIN_NAME),
        live=LiveSessions(clock),
        clock=clock,
        group=group,
    )


@pytest.fixture
def plugin_manager() -> pluggy.PluginManager:
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    return manager


async def test_client_modules_hook_ships_one_module_for_schedule_change_views(
    plugin_manager: pluggy.PluginManager,
) -> None:
    async with anyio.create_task_group() as group:
        plugin = ScheduleUiPlugin(new_context(group))
    plugin_manager.register(plugin, name=PLUGIN_NAME)
    try:
        results = plugin_manager.hook.dsh_client_modules()
    finally:
        plugin_manager.unregister(name=PLUGIN_NAME)

    assert len(results) == 1
    [modules] = results
    assert len(modules) == 1
    [module] = modules
    assert isinstance(module, ClientModule)
    assert module.event_types == ("schedule/change", "schedule/notice", "schedule/snooze")
    assert module.path.is_file()
    assert module.path.name == "schedule-reminder.js"
    assert module.imports == IMPORTS


async def test_every_relative_import_of_the_modules_is_shipped_and_nothing_else_is_needed() -> None:
    async with anyio.create_task_group() as group:
        [module] = ScheduleUiPlugin(new_context(group)).dsh_client_modules()
    shipped = {path.name for path in (module.path, *module.imports)}
    imported: set[str] = set()
    for path in (module.path, *module.imports):
        assert path.is_file(), path
        source = path.read_text(encoding="utf-8")
        imported |= set(re.findall(r'from "\./([\w.-]+\.js)"', source))
        assert "innerHTML" not in source
        assert "insertAdjacentHTML" not in source
    assert imported == shipped - {module.path.name}
    # Nothing else of the folder is part of the module.
    assert {path.name for path in module.path.parent.glob("*.js")} == shipped


async def test_the_module_is_package_data_inside_the_import_package() -> None:
    async with anyio.create_task_group() as group:
        [module] = ScheduleUiPlugin(new_context(group)).dsh_client_modules()
    package_dir = next(iter(dsh_client_ui_schedule.__path__))
    assert module.path.parent.parent.samefile(package_dir)
    assert module.path.parent.name == "static"


async def test_the_module_is_an_es_module_that_exports_register() -> None:
    async with anyio.create_task_group() as group:
        [module] = ScheduleUiPlugin(new_context(group)).dsh_client_modules()
    source = module.path.read_text(encoding="utf-8")
    assert re.search(r"^export function register\(registry\) \{$", source, re.MULTILINE)
    # The receipt and the snooze line share what happened to cards (one page's FiredCards).
    assert "registry.register(EVENT_TYPE, (view, event, ctx) => renderScheduleReminder(" in source
    assert re.search(r'^export const EVENT_TYPE = "schedule/change";$', source, re.MULTILINE)
    assert "registry.register(NOTICE_TYPE, renderScheduleNotice)" in source
    assert re.search(r'^export const NOTICE_TYPE = "schedule/notice";$', source, re.MULTILINE)
    assert "registry.register(SNOOZE_TYPE, (view, event, ctx) => renderScheduleSnooze(" in source
    assert re.search(r'^export const SNOOZE_TYPE = "schedule/snooze";$', source, re.MULTILINE)
    # A plain browser module: no CommonJS, and no path for data to become markup.
    assert "require(" not in source
    assert "innerHTML" not in source
    assert "insertAdjacentHTML" not in source


async def test_each_host_gets_its_own_instance_and_fresh_module_lists() -> None:
    async with anyio.create_task_group() as group:
        first_context, second_context = new_context(group), new_context(group)
    first, second = ScheduleUiPlugin(first_context), ScheduleUiPlugin(second_context)
    assert first.context is first_context
    assert second.context is second_context

    shipped = first.dsh_client_modules()
    shipped.clear()
    assert first.dsh_client_modules() == second.dsh_client_modules()
    assert len(first.dsh_client_modules()) == 1


def test_the_plugin_takes_no_configuration() -> None:
    # The loader validates an overlay table only against a `Config` model; without
    # one, any table given to this plugin is rejected.
    assert not hasattr(ScheduleUiPlugin, "Config")


def test_the_package_reexports_the_plugin_and_its_module_path() -> None:
    assert dsh_client_ui_schedule.ScheduleUiPlugin is ScheduleUiPlugin
    assert dsh_client_ui_schedule.MODULE_PATH == MODULE_PATH
    assert dsh_client_ui_schedule.IMPORTS == IMPORTS
    assert EVENT_TYPES == ("schedule/change", "schedule/notice", "schedule/snooze")


def test_the_entry_point_is_discoverable_in_the_dsh_plugins_group() -> None:
    matches = [
        entry
        for entry in importlib_metadata.entry_points(group="dsh.plugins")
        if entry.name == PLUGIN_NAME
    ]
    assert len(matches) == 1
    [entry] = matches
    assert entry.value == "dsh_client_ui_schedule.plugin:ScheduleUiPlugin"
    assert entry.dist is not None
    assert entry.dist.name == "dsh-client-ui-schedule"
    assert entry.load() is ScheduleUiPlugin
