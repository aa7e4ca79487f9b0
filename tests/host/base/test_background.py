"""`Background`: urgent work goes first, background work is delayed but never starved."""

from __future__ import annotations

import anyio
import pytest

from dsh.base.background import Background
from tests.support.deadlines import until

pytestmark = pytest.mark.anyio


async def test_background_work_goes_at_once_while_nothing_is_urgent() -> None:
    background = Background(patience=3600)
    with anyio.fail_after(5):
        await background.yield_to_urgent()
        async with background.turn():
            assert background.turns_running == 1
    assert background.turns_running == 0


async def test_background_work_waits_until_the_last_urgent_hold_ends() -> None:
    background = Background(patience=3600)
    went: list[str] = []

    async def background_work(name: str) -> None:
        await background.yield_to_urgent()
        went.append(name)

    async with anyio.create_task_group() as group:
        with background.urgent():
            with background.urgent():  # holds nest
                assert background.urgent_now == 2
                group.start_soon(background_work, "a")
                group.start_soon(background_work, "b")
                for _ in range(20):
                    await anyio.lowlevel.checkpoint()
            for _ in range(20):
                await anyio.lowlevel.checkpoint()
            assert went == [], "one hold still runs"
        await until(lambda: len(went) == 2, "both to go once nothing is urgent")
    assert background.urgent_now == 0
    # A later urgent stretch makes a fresh wait (the old one was used up).
    with background.urgent():
        async with anyio.create_task_group() as group:
            group.start_soon(background_work, "c")
            for _ in range(20):
                await anyio.lowlevel.checkpoint()
            assert went == ["a", "b"]
            group.cancel_scope.cancel()


async def test_background_work_is_never_starved_it_goes_after_the_patience() -> None:
    background = Background(patience=0.01)
    with background.urgent():
        with anyio.fail_after(30):
            await background.yield_to_urgent()  # the hold never ends: patience does
        assert background.urgent_now == 1


async def test_at_most_turns_background_turns_run_at_once_in_the_order_asked() -> None:
    background = Background(turns=2, patience=3600)
    release = anyio.Event()
    started: list[int] = []

    async def turn(number: int) -> None:
        async with background.turn():
            started.append(number)
            await release.wait()

    async with anyio.create_task_group() as group:
        for number in range(5):
            group.start_soon(turn, number)
            await anyio.lowlevel.checkpoint()
        await until(lambda: len(started) == 2)
        for _ in range(20):
            await anyio.lowlevel.checkpoint()
        assert started == [0, 1] and background.turns_running == 2
        release.set()
        await until(lambda: len(started) == 5, "every turn still runs")
    assert started == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"turns": 0}, "background turns must be at least 1, not 0"),
        ({"patience": -1.0}, "patience must not be negative, not -1.0"),
        ({"patience": float("nan")}, "patience must not be negative, not nan"),
    ],
)
def test_bad_settings_are_refused_naming_the_value(options: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Background(**options)  # type: ignore[arg-type]


# -- rule 4: starts held back ---------------------------------------------------


async def test_later_holds_nothing_back_while_nothing_is_urgent_or_before_it_is_started() -> None:
    background = Background(patience=3600)
    started: list[str] = []
    with background.urgent():
        assert background.later(lambda: started.append("a")) is False  # not started yet
    async with anyio.create_task_group() as group:
        tasks = background.start(group)
        assert background.later(lambda: started.append("b")) is False  # nothing urgent
        await tasks.aclose()
        with background.urgent():
            assert background.later(lambda: started.append("c")) is False  # tasks closed
    assert started == [] and background.held_back == 0


async def test_held_back_starts_run_in_the_order_asked_once_the_last_hold_ends() -> None:
    background = Background(patience=3600)
    started: list[int] = []
    async with anyio.create_task_group() as group:
        background.start(group)
        with background.urgent():
            with background.urgent():
                for number in range(3):
                    assert background.later(lambda number=number: started.append(number))
                for _ in range(20):
                    await anyio.lowlevel.checkpoint()
            for _ in range(20):
                await anyio.lowlevel.checkpoint()
            assert started == [] and background.held_back == 3, "one hold still runs"
        await until(lambda: started == [0, 1, 2], "every start, in order, once quiet")
        assert background.held_back == 0
        # A later urgent stretch holds back again (its own releasing task).
        with background.urgent():
            assert background.later(lambda: started.append(3))
        await until(lambda: started == [0, 1, 2, 3])


async def test_a_start_held_back_goes_after_the_patience_while_urgent_work_never_ends() -> None:
    background = Background(patience=0.05)
    started: list[str] = []
    async with anyio.create_task_group() as group:
        background.start(group)
        with background.urgent():
            assert background.later(lambda: started.append("first"))
            await until(lambda: started == ["first"], "patience lets it go")
            assert background.urgent_now == 1
            assert background.later(lambda: started.append("second"))
            await until(lambda: started == ["first", "second"])


async def test_a_start_that_fails_is_logged_and_the_next_still_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    background = Background(patience=3600)
    started: list[str] = []

    def broken() -> None:
        raise RuntimeError("the agent is gone")

    async with anyio.create_task_group() as group:
        background.start(group)
        with background.urgent():
            background.later(broken)
            background.later(lambda: started.append("next"))
        await until(lambda: started == ["next"])
    assert "background: starting" in caplog.text and "the agent is gone" in caplog.text


async def test_closing_the_tasks_drops_what_was_held_back() -> None:
    background = Background(patience=3600)
    started: list[str] = []
    async with anyio.create_task_group() as group:
        tasks = background.start(group)
        with background.urgent():
            assert background.later(lambda: started.append("never"))
            await anyio.lowlevel.checkpoint()
            await tasks.aclose()
            assert background.held_back == 0
    assert started == []
