"""`Listeners`: every registration returns the disposer that removes exactly it."""

from __future__ import annotations

from collections.abc import Callable

from dsh.base.listeners import Listeners


def test_listeners_are_kept_in_order_and_each_disposer_removes_its_own() -> None:
    listeners: Listeners[Callable[[str], None]] = Listeners()
    heard: list[str] = []
    first = listeners.add(lambda text: heard.append(f"a {text}"))
    listeners.add(lambda text: heard.append(f"b {text}"))

    for listener in listeners:
        listener("x")
    first()
    first()  # idempotent
    for listener in listeners:
        listener("y")

    assert heard == ["a x", "b x", "b y"]
    assert len(listeners) == 1


def test_the_same_callback_twice_is_two_registrations() -> None:
    listeners: Listeners[Callable[[], None]] = Listeners()

    def callback() -> None: ...

    one = listeners.add(callback)
    listeners.add(callback)
    one()

    assert list(listeners) == [callback]
    assert "remove listener" in repr(one)


def test_iterating_is_a_snapshot_so_listeners_may_remove_themselves() -> None:
    listeners: Listeners[Callable[[], None]] = Listeners()
    calls: list[str] = []
    removals: list[Callable[[], object]] = []

    def once() -> None:
        calls.append("once")
        removals[0]()

    removals.append(listeners.add(once))
    listeners.add(lambda: calls.append("always"))

    for listener in listeners:
        listener()
    for listener in listeners:
        listener()

    assert calls == ["once", "always", "always"]


def test_clear_forgets_everything_and_old_disposers_stay_harmless() -> None:
    listeners: Listeners[int] = Listeners()
    remove = listeners.add(1)
    listeners.add(2)
    assert listeners

    listeners.clear()
    remove()

    assert not listeners
    assert list(listeners) == []


def test_every_change_shows_in_the_next_iteration() -> None:
    listeners: Listeners[int] = Listeners()
    remove_one = listeners.add(1)
    assert list(listeners) == [1]
    listeners.add(2)
    assert list(listeners) == [1, 2]
    remove_one()
    assert list(listeners) == [2]
    remove_one()  # already removed: nothing changes
    assert list(listeners) == [2]
    listeners.clear()
    assert list(listeners) == []
    listeners.add(3)
    assert list(listeners) == [3]


def test_the_snapshot_follows_every_change_and_one_handed_out_never_changes() -> None:
    listeners: Listeners[int] = Listeners()
    assert listeners.snapshot == () and listeners.current() == ()
    remove_one = listeners.add(1)
    assert listeners.snapshot is None  # built again only when someone reads it
    listeners.add(2)
    before = listeners.current()
    assert before == (1, 2) and listeners.snapshot is before

    remove_one()
    listeners.add(3)

    assert before == (1, 2)  # what a caller iterates is not altered under it
    assert listeners.snapshot is None
    assert listeners.current() == (2, 3) == listeners.snapshot
    assert list(listeners) == [2, 3]
    listeners.clear()
    assert listeners.snapshot == () and listeners.current() == ()
