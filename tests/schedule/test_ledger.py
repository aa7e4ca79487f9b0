from __future__ import annotations

import anyio
import pytest

from dsh_tool_schedule.ids import MAX_REMINDER_NUMBER
from dsh_tool_schedule.protocol import MAX_SAFE_INTEGER
from dsh_tool_schedule.timefmt import MAX_TIMESTAMP_MS

from .conftest import START_MS, Harness, Outcome, changes, dispatches, settle
from .logs import create, fork, raw, resume, session, user

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
    second = await harness.value(agent, "schedule_create", prompt="b", after_seconds=10)
    assert (first["id"], second["id"]) == ("rem-1", "rem-2")


async def test_list_returns_active_reminders_in_creation_order(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="later", after_seconds=300)
    await harness.value(agent, "schedule_create", prompt="sooner", after_seconds=60)
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
    assert {item["deliveryMode"] for item in listing["reminders"]} == {"session-local"}
    assert listener.flushes == flushes + 1


async def test_list_shows_overdue_once_the_wall_clock_passes_the_target(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="a", after_seconds=10)
    await settle()
    harness.clock.jump_wall(11)  # the owner's sleep has not woken: the list sees it first
    listing = await harness.value(agent, "schedule_list")
    assert listing["reminders"][0]["state"] == "overdue"


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


async def test_delete_appends_one_id_only_change_between_two_barriers(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="a", after_seconds=10)
    listener = harness.listener(agent)
    listener.marks.clear()
    await harness.value(agent, "schedule_delete", id="rem-1")
    assert changes(agent.session)[-1] == {"version": 1, "change": "delete", "id": "rem-1"}
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
        ("schedule_list", {}),
        ("schedule_delete", {"id": "rem-1"}),
        ("schedule_delete", {"id": "rem-9"}),
    ):
        error = await harness.error(agent, name, **arguments)
        assert error["code"] == code
        assert "nothing was changed" in error["message"]

    assert list(agent.session.events) == before


async def test_a_raised_barrier_after_create_is_uncertain_and_names_the_record(
    harness: Harness,
) -> None:
    agent = harness.open()
    harness.listener(agent).script("ok", "raise")
    error = await harness.error(agent, "schedule_create", prompt="a", after_seconds=10)
    assert error["code"] == "persistence_uncertain"
    assert "reminder rem-1 was appended" in error["message"]
    assert "StorageDown: disk on fire" in error["message"]
    assert len(changes(agent.session)) == 1


async def test_a_refused_barrier_after_delete_is_unavailable(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="a", after_seconds=10)
    harness.listener(agent).script("ok", "refuse")
    error = await harness.error(agent, "schedule_delete", id="rem-1")
    assert error["code"] == "persistence_unavailable"
    assert "the delete of rem-1 was appended" in error["message"]
    assert "would not survive a restart" in error["message"]
    listing = await harness.value(agent, "schedule_list")
    assert listing == {"reminders": []}


async def test_no_listener_at_all_means_persistence_unavailable(harness: Harness) -> None:
    agent = harness.open(publish=False)
    harness.store.close(agent.session)
    harness.store.open(agent.session)  # live again, but with no durable listener
    harness.publish(agent)
    error = await harness.error(agent, "schedule_list")
    assert error["code"] == "persistence_unavailable"


async def test_a_target_past_the_year_9999_is_invalid_rule_and_appends_nothing(
    harness: Harness,
) -> None:
    agent = harness.open()
    latest = (MAX_TIMESTAMP_MS - START_MS) // 1000
    view = await harness.value(agent, "schedule_create", prompt="far", after_seconds=latest)
    assert view["scheduledAt"].startswith("9999-12-31T23:59:")
    for seconds in (latest + 1, MAX_SAFE_INTEGER):
        error = await harness.error(agent, "schedule_create", prompt="x", after_seconds=seconds)
        assert error["code"] == "invalid_rule"
        assert "9999-12-31T23:59:59.999Z" in error["message"]
    assert len(changes(agent.session)) == 1


async def test_an_exhausted_id_space_is_an_internal_error(harness: Harness) -> None:
    stored = session(create(f"rem-{MAX_REMINDER_NUMBER}", 10_000))
    agent = harness.open(resume(stored, at_ms=START_MS))
    error = await harness.error(agent, "schedule_create", prompt="x", after_seconds=1)
    assert error["code"] == "internal_error"
    assert "every reminder id" in error["message"]
    assert len(agent.session) == 2


async def test_a_broken_log_answers_schedule_log_invalid_and_changes_nothing(
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

    for name, arguments in (
        ("schedule_create", {"prompt": "b", "after_seconds": 5}),
        ("schedule_list", {}),
        ("schedule_delete", {"id": "rem-1"}),
    ):
        error = await harness.error(agent, name, **arguments)
        assert error["code"] == "schedule_log_invalid"
        assert "seq 2" in error["message"]
        assert "dispatch of rem-2, which is never created in this fold" in error["message"]
        assert "nothing was changed" in error["message"]

    await settle()
    harness.clock.advance(60)
    await settle()
    assert list(agent.session.events) == before
    assert harness.clock.sleeping == 0  # the owner stays idle for this Session

    agent.submit("still there?")
    with anyio.fail_after(5):
        await agent.when_idle()
    assert [event.type for event in agent.session.events[len(before) :]] == [
        "message/user",
        "message/assistant",
        "turn/end",
    ]


async def test_a_log_broken_by_a_later_append_is_reported_from_then_on(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="a", after_seconds=10)
    harness.store.append(
        agent.session, "schedule/change", {"version": 9, "change": "delete", "id": "rem-1"}
    )
    error = await harness.error(agent, "schedule_list")
    assert error["code"] == "schedule_log_invalid"
    assert "seq 1" in error["message"]
    assert "version" in error["message"]


async def test_a_fork_manages_only_its_own_reminders(harness: Harness) -> None:
    parent = harness.open()
    await harness.value(parent, "schedule_create", prompt="parent", after_seconds=10)
    child = harness.open(fork(parent.session, "child"))
    assert await harness.value(child, "schedule_list") == {"reminders": []}
    assert (await harness.value(child, "schedule_delete", id="rem-1"))["deleted"] is False
    view = await harness.value(child, "schedule_create", prompt="child", after_seconds=10)
    assert view["id"] == "rem-1"


async def test_a_watcher_hears_every_confirmed_barrier_until_its_disposer_runs(
    harness: Harness,
) -> None:
    from dsh_tool_schedule.ledger import ScheduleLedger

    agent = harness.open(publish=False)
    ledger = ScheduleLedger(session=agent.session, store=harness.store, clock=harness.clock)
    heard: list[str] = []
    stop = ledger.watch(lambda: heard.append("confirmed"))

    await ledger.list_active()
    stop()
    await ledger.list_active()

    assert heard == ["confirmed"]
