from __future__ import annotations

import dataclasses
import gc
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from importlib.metadata import entry_points

import anyio
import pluggy
import pytest
from pydantic import BaseModel

from dsh import Metrics
from dsh.models.base import ModelReply
from dsh.plugins import hookspecs
from dsh.session.log import Session
from dsh.testing import FakeClock
from dsh_tool_schedule import NOTICE_TYPE, ScheduleConfig, ScheduleFold, SchedulePlugin
from dsh_tool_schedule.demo import ScheduleDemoSkill

from .conftest import (
    START_MS,
    FakeModel,
    Harness,
    data,
    dispatches,
    reminder_messages,
    settle,
    tool_call,
)
from .logs import (
    create,
    create2,
    delete,
    dispatch,
    dispatch2,
    every,
    extend,
    followup,
    raw,
    session,
    user,
)
from .test_presentation import ColdLog

pytestmark = pytest.mark.anyio

TOOLS = ["schedule_create", "schedule_update", "schedule_list", "schedule_delete"]


def test_the_entry_point_names_the_plugin_class() -> None:
    [point] = [
        point for point in entry_points(group="dsh.plugins") if point.name == "tool-schedule"
    ]
    assert point.load() is SchedulePlugin
    assert SchedulePlugin.Config is ScheduleConfig


async def test_root_agents_get_the_tools_and_child_agents_do_not(harness: Harness) -> None:
    root = harness.open()
    child_session = Session.new("child", cwd="/work", created_at=START_MS, delegation_depth=1)
    child = harness.open(child_session, parent=root)

    assert root.tools.names() == TOOLS
    assert child.tools.names() == []
    await settle()
    assert len(child.tasks) == 0


async def test_roots_published_before_the_plugin_loaded_are_left_alone(harness: Harness) -> None:
    pm = pluggy.PluginManager("dsh")
    pm.add_hookspecs(hookspecs)
    early = harness.open(publish=False)
    pm.hook.dsh_agent_published(agent=early)

    plugin = SchedulePlugin(replace(harness.context, metrics=Metrics()))  # a second instance
    pm.register(plugin, name="tool-schedule")
    late = harness.open(publish=False)
    pm.hook.dsh_agent_published(agent=late)

    assert early.tools.names() == []
    assert late.tools.names() == TOOLS
    await settle()
    assert len(early.tasks) == 0


async def test_each_host_installs_only_in_its_own_agents(harness: Harness) -> None:
    async with anyio.create_task_group() as group:
        other = Harness(group, FakeClock(START_MS))
        mine = harness.open()
        theirs = other.open()

        assert mine.tools.names() == TOOLS
        assert theirs.tools.names() == TOOLS
        await other.plugin_scope.aclose()
        assert mine.tools.names() == TOOLS
        assert theirs.tools.names() == []
        await harness.plugin_scope.aclose()
        assert mine.tools.names() == []
        await other.aclose()


async def test_the_config_is_validated_and_defaults_when_absent(harness: Harness) -> None:
    # Instances beside the harness's own, each with a registry of its own (one per Host).
    context = replace(harness.context, config=None, metrics=Metrics())
    assert SchedulePlugin(context).config == ScheduleConfig()
    assert ScheduleConfig().max_segment_seconds == 60
    context = replace(context, config=ScheduleConfig(max_segment_seconds=5), metrics=Metrics())
    assert SchedulePlugin(context).config.max_segment_seconds == 5

    class Other(BaseModel):
        pass

    context = replace(context, config=Other(), metrics=Metrics())
    with pytest.raises(TypeError, match="expects a ScheduleConfig, got Other"):
        SchedulePlugin(context)


def test_the_config_bounds_a_segment_to_60_seconds() -> None:
    with pytest.raises(ValueError, match="max_segment_seconds"):
        ScheduleConfig(max_segment_seconds=61)
    with pytest.raises(ValueError, match="early_wake_seconds"):
        ScheduleConfig(early_wake_seconds=-1)
    with pytest.raises(ValueError, match="extra"):
        ScheduleConfig.model_validate({"max_segment_seconds": 30, "cron": "x"})


def test_the_limits_default_to_the_products_and_are_bounded() -> None:
    config = ScheduleConfig()
    assert (config.max_active, config.max_per_turn, config.min_interval_seconds) == (100, 20, 60)
    assert config.misfire_grace_seconds == 300
    for field, value in (
        ("max_active", 0),
        ("max_per_turn", 0),
        ("min_interval_seconds", 0),
        ("misfire_grace_seconds", -1),
        ("min_interval_seconds", 1.5),
    ):
        with pytest.raises(ValueError, match=field):
            ScheduleConfig.model_validate({field: value})


async def test_the_event_view_hook_presents_accepted_dispatches_and_notices(
    harness: Harness,
) -> None:
    log = session(
        create("rem-1", prompt="stretch"),
        user(),
        dispatch("rem-1"),
        create("rem-2"),
        delete("rem-2"),
        raw({"version": 1, "change": "dispatch", "id": 7}),
        (NOTICE_TYPE, {"version": 1, "notice": "log_invalid", "seq": 5, "reason": "bad id"}),
        (NOTICE_TYPE, {"version": 1, "notice": "log_invalid"}),
    )
    views = {
        event.seq: harness.pm.hook.dsh_event_view(session=log, event=event) for event in log.events
    }
    receipt = views.pop(2)
    assert (receipt["scheduleId"], receipt["prompt"], receipt["occurrenceAt"]) == (
        "rem-1",
        "stretch",
        "2026-01-01T00:00:10.000Z",
    )
    assert views.pop(6) == {
        "notice": "log_invalid",
        "seq": 5,
        "reason": "bad id",
        "deliveryMode": "session-local",
    }
    assert views == {0: None, 1: None, 3: None, 4: None, 5: None, 7: None}


async def test_receipts_of_one_log_share_one_fold(harness: Harness) -> None:
    log = session(
        create2(every(60, first_ms=START_MS + 60_000)),
        *[dispatch2("rem-1", START_MS + 60_000 * k, 0) for k in range(1, 6)],
    )
    calls: list[int] = []
    real = ScheduleFold._apply

    def counting(self: ScheduleFold, seq: int, data: object) -> object:
        calls.append(seq)
        return real(self, seq, data)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ScheduleFold, "_apply", counting)
        views = [harness.pm.hook.dsh_event_view(session=log, event=event) for event in log.events]
        again = harness.pm.hook.dsh_event_view(session=log, event=log.events[1])
    assert [view is not None for view in views] == [False, True, True, True, True, True]
    assert again == views[1]
    assert calls == [0, 1, 2, 3, 4, 5]  # every event folded once, not once per receipt


async def test_each_request_s_log_object_reuses_the_fold_of_the_one_before(
    harness: Harness,
) -> None:
    entries = [create2(every(60, first_ms=START_MS + 60_000)), user()]
    entries += [dispatch2("rem-1", START_MS + 60_000 * k, 0) for k in range(1, 6)]
    stored = session(*entries, followup(2, 3, 4, 5, 6))
    calls: list[int] = []
    real = ScheduleFold._apply

    def counting(self: ScheduleFold, seq: int, data: object) -> object:
        calls.append(seq)
        return real(self, seq, data)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ScheduleFold, "_apply", counting)
        # Each request of a cold Session gets a new log object (a `StoredLog`).
        state = harness.plugin.dsh_session_state(session=ColdLog(stored))
        views = [
            harness.plugin.dsh_event_view(session=ColdLog(stored), event=event)
            for event in stored.events
        ]
        wake = harness.plugin.dsh_session_wake_at(session=ColdLog(stored))
        grown = extend(stored, delete("rem-1"))
        after = harness.plugin.dsh_session_state(session=ColdLog(grown))
    assert calls == [0, 2, 3, 4, 5, 6, 8]  # every event folded once across all requests
    assert isinstance(state, dict) and [view["id"] for view in state["reminders"]] == ["rem-1"]
    shown = [view is not None for view in views]
    assert shown == [False, False, True, True, True, True, True, False]
    assert wake == START_MS + 6 * 60_000
    assert after == {"reminders": [], "firesWhenClosed": False}  # this host wakes nothing


async def test_the_folds_are_dropped_when_the_plugin_s_scope_closes(harness: Harness) -> None:
    harness.plugin.dsh_session_state(session=session(create("rem-1")))
    assert len(harness.plugin.folds) == 1
    await harness.plugin_scope.aclose()
    assert len(harness.plugin.folds) == 0


async def test_an_agent_s_ledger_starts_from_the_fold_the_plugin_holds(harness: Harness) -> None:
    stored = session(create2(every(3600, first_ms=START_MS + 3_600_000)), user(), session_id="s9")
    harness.plugin.dsh_session_state(session=stored)  # a state frame while it was cold
    calls: list[int] = []
    real = ScheduleFold._apply

    def counting(self: ScheduleFold, seq: int, data: object) -> object:
        calls.append(seq)
        return real(self, seq, data)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ScheduleFold, "_apply", counting)
        agent = harness.open(Session.resume(stored.header, stored.events, resumed_at=START_MS))
        await settle()
        fold = harness.plugin._installations[agent].ledger.fold()
    assert calls == []  # the create was folded before the agent existed
    assert [item.id for item in fold.reminders()] == ["rem-1"]


async def test_a_reminder_set_by_the_model_fires_into_a_later_turn(harness: Harness) -> None:
    model = FakeModel(
        tool_call("schedule_create", prompt="stretch", after_seconds=10),
        ModelReply(text="I'll remind you."),
    )
    agent = harness.open(model=model)
    agent.submit("remind me in 10 seconds to stretch")
    await settle()

    [result] = [event for event in agent.session.events if event.type == "tool/result"]
    assert data(result)["value"]["id"] == "rem-1"
    assert data(result)["value"]["state"] == "scheduled"

    harness.clock.advance(9.75)
    await settle()
    harness.clock.advance(0.25)
    await settle()

    assert len(dispatches(agent.session)) == 1
    [message] = reminder_messages(agent.session)
    assert message.seq > dispatches(agent.session)[0].seq
    assert 'Prompt: "stretch"' in model.requests[-1].messages[-1].text
    assert "(UTC) = 2026-01-01T00:00:10.000Z" in model.requests[-1].messages[-1].text
    view = harness.pm.hook.dsh_event_view(session=agent.session, event=dispatches(agent.session)[0])
    assert view["scheduleId"] == "rem-1"
    assert agent.session.events[-1].type == "turn/end"


# -- the state, wake and command hooks ----------------------------------------------------


async def test_the_state_hook_lists_reminders_as_of_the_log_and_the_wake_hook_when_due(
    harness: Harness,
) -> None:
    tea = every(3600, first_ms=START_MS + 3_600_000)
    log = session(create2(tea), user())

    state = harness.plugin.dsh_session_state(session=log)
    wake = harness.plugin.dsh_session_wake_at(session=log)

    assert isinstance(state, dict) and [view["id"] for view in state["reminders"]] == ["rem-1"]
    assert state["reminders"][0]["state"] == "scheduled"
    assert wake == START_MS + 3_600_000
    # Pure: the same log gives the same answers, whatever the clock says.
    harness.clock.jump_wall(86_400)
    assert harness.plugin.dsh_session_state(session=log) == state
    assert harness.plugin.dsh_session_wake_at(session=log) == wake


async def test_the_check_hook_answers_the_fold_s_refusal_of_a_log_from_outside(
    harness: Harness,
) -> None:
    fine = session(create("rem-1"), user(), dispatch("rem-1"))
    assert harness.plugin.dsh_session_check(session=fine) is None
    broken = session(create("rem-1"), dispatch("rem-2"))
    said = harness.plugin.dsh_session_check(session=broken)
    assert said is not None and said.startswith("its schedule log is invalid at seq 1: ")


async def test_the_command_hook_registers_dsh_reminders(harness: Harness) -> None:
    registered: list[tuple[str, str]] = []

    def register(name: str, run: object, *, help: str, configure: object = None) -> None:
        registered.append((name, help))

    harness.plugin.dsh_cli_commands(register=register)

    assert registered == [
        ("reminders", "list, add, pause, resume, snooze and delete the reminders of Sessions")
    ]


async def test_the_demo_hook_teaches_the_demo_model_reminders(harness: Harness) -> None:
    from dsh_tool_schedule.demo import ScheduleDemoSkill

    (skill,) = harness.plugin.dsh_demo_skills()
    assert isinstance(skill, ScheduleDemoSkill)


async def test_receipts_read_from_worker_threads_agree_with_one_read_on_the_loop(
    harness: Harness,
) -> None:
    hourly = every(3600, first_ms=START_MS + 3_600_000)
    entries = [create2(hourly)]
    entries += [dispatch2("rem-1", START_MS + hour * 3_600_000, 0) for hour in range(1, 41)]
    logs = [session(*entries, session_id=f"s{n}") for n in range(4)]

    def receipts(log: Session) -> list[object]:
        return [harness.plugin.dsh_event_view(session=log, event=event) for event in log.events[1:]]

    expected = receipts(session(*entries))
    with ThreadPoolExecutor(max_workers=8) as pool:
        # Each log is read by two threads at once, and every thread shares the plugin's cache.
        found = list(pool.map(receipts, [*logs, *logs]))

    assert all(result == expected for result in found)
    assert expected[0] is not None and expected[-1] is not None


async def test_a_closed_agent_is_not_kept_by_the_plugin(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="tea", after_seconds=3600)
    await settle()
    gone = weakref.ref(agent)
    await agent.aclose()
    harness.agents.remove(agent)
    del agent
    gc.collect()
    assert gone() is None  # with its Session and every event it held


async def test_what_a_closed_conversation_does_is_said_as_the_host_does_it(
    harness: Harness,
) -> None:
    harness.plugin.context = dataclasses.replace(harness.context, wakes_cold_sessions=True)
    agent = harness.open()
    created = await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=60)
    listing = await harness.value(agent, "schedule_list")
    state = harness.plugin.dsh_session_state(session=agent.session)

    assert created["firesWhenClosed"] is True and listing["firesWhenClosed"] is True
    assert isinstance(state, dict) and state["firesWhenClosed"] is True


async def test_the_plugin_teaches_the_demo_model_reminders(harness: Harness) -> None:
    (skill,) = harness.plugin.dsh_demo_skills()
    assert isinstance(skill, ScheduleDemoSkill)
