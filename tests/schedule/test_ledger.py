from __future__ import annotations

import json

import anyio
import pytest

from dsh.testing import FakeClock
from dsh_tool_schedule import ScheduleConfig, ScheduleConflict
from dsh_tool_schedule.drafts import UpdateRequest
from dsh_tool_schedule.ids import MAX_REMINDER_NUMBER
from dsh_tool_schedule.ledger import ScheduleLedger
from dsh_tool_schedule.timefmt import MAX_TIMESTAMP_MS

from .conftest import START_MS, Harness, Outcome, changes, dispatches, settle
from .logs import create, create2, every, fork, raw, resume, session, user

pytestmark = pytest.mark.anyio


async def test_create_flushes_before_reading_and_again_after_appending(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="a", after_seconds=10)
    assert harness.listener(agent).marks == [0, 1]


async def test_ids_count_up_and_are_not_reused_after_a_delete(harness: Harness) -> None:
    agent = harness.open()
    first = await harness.value(agent, "schedule_create", prompt="a", after_seconds=10)
    assert await harness.value(agent, "schedule_delete", id=first["id"]) == {
        "id": "rem-1",
        "deleted": True,
    }
    second = await harness.value(agent, "schedule_create", prompt="b", every_seconds=60)
    assert (first["id"], second["id"]) == ("rem-1", "rem-2")
    assert changes(agent.session)[1] == {"version": 2, "change": "delete", "id": "rem-1"}


async def test_list_returns_active_reminders_in_creation_order(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="later", after_seconds=300)
    await harness.value(agent, "schedule_create", prompt="sooner", every_seconds=60)
    await harness.value(agent, "schedule_create", prompt="gone", after_seconds=60)
    await harness.value(agent, "schedule_delete", id="rem-3")
    listener = harness.listener(agent)
    flushes = listener.flushes

    listing = await harness.value(agent, "schedule_list")

    assert [(item["id"], item["prompt"]) for item in listing["reminders"]] == [
        ("rem-1", "later"),
        ("rem-2", "sooner"),
    ]
    assert {item["state"] for item in listing["reminders"]} == {"scheduled"}
    assert listener.flushes == flushes + 1


async def test_list_shows_overdue_once_the_wall_clock_passes_the_target(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="a", after_seconds=10)
    await settle()
    harness.clock.jump_wall(11)  # the owner's sleep has not woken: the list sees it first
    listing = await harness.value(agent, "schedule_list")
    assert listing["reminders"][0]["state"] == "overdue"


async def test_the_zone_defaults_to_the_one_the_person_last_wrote_from(harness: Harness) -> None:
    agent = harness.open()
    harness.live.append(
        agent.session,
        "message/user",
        {"text": "hi", "source": {"kind": "user"}, "timeZone": "Asia/Kolkata"},
    )
    view = await harness.value(agent, "schedule_create", prompt="tea", at="2026-01-01T09:00")
    assert (view["timeZone"], view["nextAt"], view["nextAtLocal"]) == (
        "Asia/Kolkata",
        "2026-01-01T03:30:00.000Z",
        "2026-01-01T09:00:00+05:30",
    )
    listing = await harness.value(agent, "schedule_list")
    assert (listing["timeZone"], listing["nowLocal"]) == (
        "Asia/Kolkata",
        "2026-01-01T05:30:00+05:30",
    )
    explicit = await harness.value(
        agent, "schedule_create", prompt="x", at="2026-01-01T09:00", time_zone="UTC"
    )
    assert explicit["timeZone"] == "UTC"


async def test_delete_of_an_unknown_finished_or_malformed_id_is_not_found(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="a", after_seconds=10)
    await harness.value(agent, "schedule_delete", id="rem-1")
    await harness.value(agent, "schedule_create", prompt="b", after_seconds=10)
    await settle()
    harness.clock.advance(10)
    await settle()
    assert len(dispatches(agent.session)) == 1
    before = list(agent.session.events)
    listener = harness.listener(agent)

    for reminder_id in ("rem-1", "rem-2", "rem-3", "nonsense"):
        flushes = listener.flushes
        assert await harness.value(agent, "schedule_delete", id=reminder_id) == {
            "id": reminder_id,
            "deleted": False,
            "code": "schedule_not_found",
        }
        assert listener.flushes == flushes + 1  # decided only after a preflight

    assert list(agent.session.events) == before


async def test_delete_appends_one_change_between_two_barriers(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="a", after_seconds=10)
    listener = harness.listener(agent)
    listener.marks.clear()
    await harness.value(agent, "schedule_delete", id="rem-1")
    assert listener.marks == [1, 2]


@pytest.mark.parametrize(
    ("outcome", "code"),
    [("raise", "persistence_uncertain"), ("refuse", "persistence_unavailable")],
)
async def test_a_failed_preflight_answers_without_reading_or_changing_anything(
    harness: Harness, outcome: Outcome, code: str
) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="a", after_seconds=10)
    listener = harness.listener(agent)
    listener.mode = outcome
    before = list(agent.session.events)

    for name, arguments in (
        ("schedule_create", {"prompt": "b", "after_seconds": 5}),
        ("schedule_update", {"id": "rem-1", "revision": 1, "prompt": "c"}),
        ("schedule_list", {}),
        ("schedule_delete", {"id": "rem-1"}),
        ("schedule_delete", {"id": "rem-9"}),
    ):
        error = await harness.error(agent, name, **arguments)
        assert error["code"] == code
        assert "nothing was changed" in error["message"]

    assert list(agent.session.events) == before


async def test_a_raised_barrier_after_create_is_uncertain_and_names_the_id(
    harness: Harness,
) -> None:
    agent = harness.open()
    harness.listener(agent).script("ok", "raise")
    error = await harness.error(agent, "schedule_create", prompt="a", after_seconds=10)
    assert error["code"] == "persistence_uncertain"
    assert "reminder rem-1 was appended" in error["message"]
    assert "StorageDown: disk on fire" in error["message"]
    assert "Call schedule_list: if rem-1 is listed it exists" in error["message"]
    assert len(changes(agent.session)) == 1


async def test_a_retry_after_an_uncertain_create_can_tell_that_the_first_exists(
    harness: Harness,
) -> None:
    agent = harness.open()
    harness.listener(agent).script("ok", "raise")
    error = await harness.error(agent, "schedule_create", prompt="tea", every_seconds=3600)
    assert "rem-1" in error["message"]

    # The model follows the message: it lists before creating again.
    listing = await harness.value(agent, "schedule_list")

    assert [(item["id"], item["prompt"]) for item in listing["reminders"]] == [("rem-1", "tea")]
    # Creating again anyway gives a second, distinct id: nothing is silently merged.
    again = await harness.value(agent, "schedule_create", prompt="tea", every_seconds=3600)
    assert again["id"] == "rem-2"


async def test_a_refused_barrier_after_delete_is_unavailable(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="a", after_seconds=10)
    harness.listener(agent).script("ok", "refuse")
    error = await harness.error(agent, "schedule_delete", id="rem-1")
    assert error["code"] == "persistence_unavailable"
    assert "the delete of rem-1 was appended" in error["message"]
    assert "would not survive a restart" in error["message"]
    listing = await harness.value(agent, "schedule_list")
    assert listing["reminders"] == []


async def test_no_listener_at_all_means_persistence_unavailable(harness: Harness) -> None:
    agent = harness.open(publish=False)
    harness.live.close(agent.session)
    harness.live.open(agent.session)  # live again, but with no durable listener
    harness.publish(agent)
    error = await harness.error(agent, "schedule_list")
    assert error["code"] == "persistence_unavailable"


async def test_a_target_past_the_year_9999_is_invalid_rule_and_appends_nothing(
    harness: Harness,
) -> None:
    agent = harness.open()
    latest = (MAX_TIMESTAMP_MS - START_MS) // 1000
    view = await harness.value(agent, "schedule_create", prompt="far", after_seconds=latest)
    assert view["nextAt"].startswith("9999-12-31T23:59:")
    error = await harness.error(agent, "schedule_create", prompt="x", after_seconds=latest + 1)
    assert error["code"] == "invalid_rule"
    assert len(changes(agent.session)) == 1


async def test_an_exhausted_id_space_is_an_internal_error(harness: Harness) -> None:
    stored = session(create(f"rem-{MAX_REMINDER_NUMBER}", 10_000))
    agent = harness.open(resume(stored, at_ms=START_MS))
    error = await harness.error(agent, "schedule_create", prompt="x", after_seconds=1)
    assert error["code"] == "internal_error"
    assert "every reminder id" in error["message"]
    assert len(agent.session) == 2


# -- limits -----------------------------------------------------------------------------


async def test_more_active_reminders_than_allowed_is_limit_exceeded() -> None:
    async with anyio.create_task_group() as group:
        host = Harness(group, FakeClock(START_MS), ScheduleConfig(max_active=2))
        agent = host.open()
        await host.value(agent, "schedule_create", prompt="a", after_seconds=60)
        await host.value(agent, "schedule_create", prompt="b", every_seconds=60)
        error = await host.error(agent, "schedule_create", prompt="c", after_seconds=60)
        assert error["code"] == "limit_exceeded"
        assert "already has 2 active reminders" in error["message"]
        assert len(changes(agent.session)) == 2
        await host.value(agent, "schedule_delete", id="rem-1")
        assert (await host.value(agent, "schedule_create", prompt="c", after_seconds=60))["id"] == (
            "rem-3"
        )
        await host.aclose()
        group.cancel_scope.cancel()


async def test_more_creates_in_one_turn_than_allowed_is_limit_exceeded() -> None:
    async with anyio.create_task_group() as group:
        host = Harness(group, FakeClock(START_MS), ScheduleConfig(max_per_turn=2))
        agent = host.open()
        host.live.append(agent.session, "message/user", {"text": "go", "source": {"kind": "user"}})
        await host.value(agent, "schedule_create", prompt="a", after_seconds=60)
        await host.value(agent, "schedule_create", prompt="b", after_seconds=60)
        error = await host.error(agent, "schedule_create", prompt="c", after_seconds=60)
        assert error["code"] == "limit_exceeded"
        assert "2 reminders were already created in this turn" in error["message"]
        host.live.append(
            agent.session, "message/user", {"text": "more", "source": {"kind": "user"}}
        )
        assert (await host.value(agent, "schedule_create", prompt="c", after_seconds=60))["id"] == (
            "rem-3"
        )
        await host.aclose()
        group.cancel_scope.cancel()


async def test_the_minimum_interval_comes_from_the_config() -> None:
    async with anyio.create_task_group() as group:
        host = Harness(group, FakeClock(START_MS), ScheduleConfig(min_interval_seconds=1))
        agent = host.open()
        view = await host.value(agent, "schedule_create", prompt="a", every_seconds=2)
        assert view["nextAt"] == "2026-01-01T00:00:02.000Z"
        await host.aclose()
        group.cancel_scope.cancel()
    async with anyio.create_task_group() as group:
        host = Harness(group, FakeClock(START_MS))
        agent = host.open()
        error = await host.error(agent, "schedule_create", prompt="a", every_seconds=2)
        assert error["code"] == "limit_exceeded"
        await host.aclose()
        group.cancel_scope.cancel()


# -- updates ------------------------------------------------------------------------------


async def test_an_update_applies_when_its_revision_is_current(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="tea", every_seconds=3600)
    listener = harness.listener(agent)
    listener.marks.clear()
    view = await harness.value(
        agent, "schedule_update", id="rem-1", revision=1, prompt="green tea", paused=True
    )
    assert (view["prompt"], view["revision"], view["state"]) == ("green tea", 2, "paused")
    assert listener.marks == [1, 2]
    update = changes(agent.session)[-1]
    assert isinstance(update, dict)
    assert (update["version"], update["change"], update["record"]["revision"]) == (2, "update", 2)
    resumed = await harness.value(agent, "schedule_update", id="rem-1", revision=2, paused=False)
    assert (resumed["state"], resumed["revision"]) == ("scheduled", 3)


async def test_a_stale_revision_is_a_conflict_with_the_current_view(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="tea", every_seconds=3600)
    await harness.value(agent, "schedule_update", id="rem-1", revision=1, prompt="coffee")
    before = list(agent.session.events)
    error = await harness.error(agent, "schedule_update", id="rem-1", revision=1, prompt="water")
    assert error["code"] == "schedule_conflict"
    assert "revision 1 is not the current revision 2 of rem-1" in error["message"]
    current = json.loads(error["message"].split("The reminder now is: ", 1)[1])
    assert (current["prompt"], current["revision"]) == ("coffee", 2)
    assert list(agent.session.events) == before


async def test_a_watcher_is_removed_by_its_disposer_once(harness: Harness) -> None:
    agent = harness.open()
    ledger = ScheduleLedger(session=agent.session, live=harness.live, clock=harness.clock)
    seen: list[str] = []
    dispose = ledger.watch(lambda: seen.append("confirmed"))
    await ledger.list_active()
    dispose()
    dispose()
    await ledger.list_active()
    assert seen == ["confirmed"]


async def test_the_conflict_carries_the_view_for_other_callers(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="tea", every_seconds=3600)
    ledger = ScheduleLedger(session=agent.session, live=harness.live, clock=harness.clock)
    with pytest.raises(ScheduleConflict) as caught:
        await ledger.update("rem-1", 7, UpdateRequest(prompt="x"))
    assert caught.value.view["id"] == "rem-1"
    assert caught.value.code == "schedule_conflict"


async def test_an_update_of_an_unknown_or_finished_reminder_is_not_found(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="a", after_seconds=1)
    await settle()
    harness.clock.advance(1)
    await settle()
    for reminder_id in ("rem-1", "rem-2"):
        error = await harness.error(
            agent, "schedule_update", id=reminder_id, revision=1, prompt="x"
        )
        assert error["code"] == "schedule_not_found"
        assert "nothing was changed" in error["message"]


async def test_a_raised_barrier_after_an_update_names_the_revision(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="a", every_seconds=60)
    harness.listener(agent).script("ok", "raise")
    error = await harness.error(agent, "schedule_update", id="rem-1", revision=1, prompt="b")
    assert error["code"] == "persistence_uncertain"
    assert "revision 2 of rem-1 was appended" in error["message"]
    assert "check the revision of rem-1 before updating it again" in error["message"]


async def test_semantic_update_errors_change_nothing(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="a", every_seconds=60)
    before = list(agent.session.events)
    error = await harness.error(agent, "schedule_update", id="rem-1", revision=1, every_seconds=5)
    assert error["code"] == "limit_exceeded"
    error = await harness.error(
        agent, "schedule_update", id="rem-1", revision=1, at="2020-01-01T00:00"
    )
    assert error["code"] == "invalid_rule"
    assert list(agent.session.events) == before


# -- a rejected log ------------------------------------------------------------------------


async def test_a_broken_log_lists_what_came_before_and_refuses_every_change(
    harness: Harness,
) -> None:
    stored = session(
        create("rem-1", 5),
        user(),
        raw({"version": 1, "change": "dispatch", "id": "rem-2"}),
        create("rem-3", 5),
    )
    agent = harness.open(resume(stored, at_ms=START_MS))
    await settle()
    before = list(agent.session.events)
    assert before[-1].type == "schedule/notice"

    for name, arguments in (
        ("schedule_create", {"prompt": "b", "after_seconds": 5}),
        ("schedule_update", {"id": "rem-1", "revision": 1, "prompt": "c"}),
        ("schedule_delete", {"id": "rem-1"}),
    ):
        error = await harness.error(agent, name, **arguments)
        assert error["code"] == "schedule_log_invalid"
        assert "seq 2" in error["message"]
        assert "dispatch of rem-2, which is never created in this fold" in error["message"]
        assert "Nothing was changed" in error["message"]

    listing = await harness.value(agent, "schedule_list")
    assert [item["id"] for item in listing["reminders"]] == ["rem-1"]
    assert listing["error"]["code"] == "schedule_log_invalid"
    assert "none is delivered" in listing["error"]["message"]
    # The owner told the person once (a schedule/notice) and delivers nothing.
    notices = [e for e in agent.session.events if e.type == "schedule/notice"]
    assert [e.data for e in notices] == [
        {
            "version": 1,
            "notice": "log_invalid",
            "seq": 2,
            "reason": "dispatch of rem-2, which is never created in this fold",
        }
    ]
    harness.clock.advance(60)
    await settle()
    assert list(agent.session.events) == before


async def test_a_log_broken_by_a_later_append_is_reported_from_then_on(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="a", after_seconds=10)
    harness.live.append(
        agent.session, "schedule/change", {"version": 9, "change": "delete", "id": "rem-1"}
    )
    error = await harness.error(agent, "schedule_delete", id="rem-1")
    assert error["code"] == "schedule_log_invalid"
    assert "seq 1" in error["message"]
    assert "version" in error["message"]


# -- forks and expiry ----------------------------------------------------------------------


async def test_a_fork_manages_only_its_own_reminders(harness: Harness) -> None:
    parent = harness.open()
    await harness.value(parent, "schedule_create", prompt="parent", after_seconds=10)
    child = harness.open(fork(parent.session, "child"))
    listing = await harness.value(child, "schedule_list")
    assert listing["reminders"] == []
    assert (await harness.value(child, "schedule_delete", id="rem-1"))["deleted"] is False
    view = await harness.value(child, "schedule_create", prompt="child", after_seconds=10)
    assert view["id"] == "rem-1"


async def test_a_watcher_hears_every_confirmed_barrier_until_its_disposer_runs(
    harness: Harness,
) -> None:
    from dsh_tool_schedule.ledger import ScheduleLedger

    agent = harness.open(publish=False)
    ledger = ScheduleLedger(session=agent.session, live=harness.live, clock=harness.clock)
    heard: list[str] = []
    stop = ledger.watch(lambda: heard.append("confirmed"))

    await ledger.list_active()
    stop()
    await ledger.list_active()

    assert heard == ["confirmed"]


async def test_an_expired_skip_reminder_is_finished_for_every_tool(harness: Harness) -> None:
    expired = every(60, first_ms=START_MS + 60_000, misfire="skip", until_ms=START_MS + 120_000)
    harness.clock.jump_wall(3600)
    agent = harness.open(resume(session(create2(expired)), at_ms=harness.clock.wall_ms()))
    await settle()
    assert (await harness.value(agent, "schedule_list"))["reminders"] == []
    assert (await harness.value(agent, "schedule_delete", id="rem-1"))["deleted"] is False
    assert dispatches(agent.session) == []
