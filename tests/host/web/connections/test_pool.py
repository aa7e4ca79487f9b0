from __future__ import annotations

import resource

import pytest

from dsh.web.connections.pool import (
    UNLIMITED,
    ConnectionLimits,
    ConnectionPool,
    Ticket,
    descriptor_limit,
)


class Connection:
    """A stand-in for a transport: records whether the pool closed it."""

    def __init__(self, pool: ConnectionPool) -> None:
        ticket = pool.admit()
        assert ticket is not None
        self.ticket: Ticket = ticket
        self.closed = False
        ticket.attach(self.close)

    def close(self) -> None:
        self.closed = True


def test_limits_give_connections_half_the_descriptors_and_strangers_half_of_those() -> None:
    assert ConnectionLimits.for_process(1024, 128, descriptors=1024) == ConnectionLimits(512, 128)
    assert ConnectionLimits.for_process(1024, 128, descriptors=100) == ConnectionLimits(50, 25)
    assert ConnectionLimits.for_process(1024, 128, descriptors=1 << 20) == ConnectionLimits(
        1024, 128
    )
    assert ConnectionLimits.for_process(10, 100, descriptors=1 << 20) == ConnectionLimits(10, 5)


def test_limits_never_drop_below_one_stranger_and_two_connections() -> None:
    assert ConnectionLimits.for_process(1024, 128, descriptors=1) == ConnectionLimits(2, 1)


@pytest.mark.parametrize(("total", "unauthenticated"), [(4, 4), (4, 0), (1, 1)])
def test_limits_refuse_an_unauthenticated_cap_outside_the_total(
    total: int, unauthenticated: int
) -> None:
    with pytest.raises(ValueError, match="connection limits"):
        ConnectionLimits(total, unauthenticated)


def test_the_descriptor_limit_is_the_soft_rlimit(monkeypatch: pytest.MonkeyPatch) -> None:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert descriptor_limit() == min(soft, UNLIMITED)
    monkeypatch.setattr(
        resource, "getrlimit", lambda _: (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
    )
    assert descriptor_limit() == UNLIMITED
    assert ConnectionLimits.for_process(1024, 128) == ConnectionLimits(1024, 128)


def test_a_full_pool_evicts_its_oldest_unauthenticated_connection() -> None:
    events: list[str] = []
    pool = ConnectionPool(ConnectionLimits(8, 2), on_event=events.append)
    first, second = Connection(pool), Connection(pool)
    third = Connection(pool)
    assert (first.closed, second.closed, third.closed) == (True, False, False)
    assert pool.held == 2 and pool.unauthenticated == 2
    assert events == ["evicted"]
    assert pool.stats["admitted"] == 3 and pool.stats["evicted"] == 1


def test_a_connection_being_answered_is_evicted_after_idle_ones() -> None:
    pool = ConnectionPool(ConnectionLimits(8, 2))
    answering, idle = Connection(pool), Connection(pool)
    answering.ticket.answering(True)
    Connection(pool)
    assert (answering.closed, idle.closed) == (False, True)


def test_strangers_go_partway_first_then_quiet_then_answered_each_oldest_first() -> None:
    pool = ConnectionPool(ConnectionLimits(16, 6))
    answering = [Connection(pool), Connection(pool)]
    quiet = [Connection(pool), Connection(pool)]
    partway = [Connection(pool), Connection(pool)]
    for connection in answering:
        connection.ticket.answering(True)
    for connection in partway:
        connection.ticket.receiving(True)
    assert pool.partway == 2
    order = [*partway, *quiet, *answering]
    for evicted in range(1, len(order) + 1):
        assert pool.evict_one()
        assert [c.closed for c in order] == [True] * evicted + [False] * (len(order) - evicted)
    assert not pool.evict_one() and pool.unauthenticated == 0


def test_a_connection_whose_request_completes_is_no_longer_partway() -> None:
    pool = ConnectionPool(ConnectionLimits(8, 2))
    older, younger = Connection(pool), Connection(pool)
    older.ticket.receiving(True)
    older.ticket.receiving(False)  # its request is in: quiet again until the next one
    younger.ticket.receiving(True)
    assert pool.partway == 1
    Connection(pool)
    assert (older.closed, younger.closed) == (False, True)


@pytest.mark.parametrize("reads_after", [1, 5, 15])
def test_a_slow_newcomer_outlasts_any_number_of_slowloris_reconnects(reads_after: int) -> None:
    """The descriptor-limit attack, replayed on the pool alone.

    20 places for strangers, all held by an attacker whose connections each send part
    of a head as soon as they are read (`reads_after` admissions after their own). An
    authorized client connects and sends nothing for a while (1,000 admissions: a second
    of reconnects at 1,000/s): it must still be held, and then authenticate.
    """
    pool = ConnectionPool(ConnectionLimits(40, 20))
    unread: list[Connection] = []

    def admit_attacker() -> None:
        unread.append(Connection(pool))
        if len(unread) > reads_after:
            unread.pop(0).ticket.receiving(True)  # read: a partial head, never finished

    for _ in range(20):
        admit_attacker()
    client = Connection(pool)
    for _ in range(1000):
        admit_attacker()
    assert not client.closed
    client.ticket.authenticate()
    assert client.ticket.authenticated and pool.stats["evicted"] >= 1000


def test_among_strangers_that_send_nothing_the_oldest_still_goes_first() -> None:
    pool = ConnectionPool(ConnectionLimits(8, 3))
    silent = [Connection(pool) for _ in range(3)]
    Connection(pool)
    assert [c.closed for c in silent] == [True, False, False]


def test_when_every_stranger_is_being_answered_the_oldest_goes() -> None:
    pool = ConnectionPool(ConnectionLimits(8, 2))
    first, second = Connection(pool), Connection(pool)
    first.ticket.answering(True)
    second.ticket.answering(True)
    Connection(pool)
    assert (first.closed, second.closed) == (True, False)


def test_authenticated_connections_are_never_evicted_and_a_full_pool_of_them_refuses() -> None:
    events: list[str] = []
    pool = ConnectionPool(ConnectionLimits(3, 1), on_event=events.append)
    members = []
    for _ in range(3):
        members.append(Connection(pool))
        members[-1].ticket.authenticate()
    assert pool.held == 3 and pool.unauthenticated == 0
    assert pool.admit() is None
    assert not any(member.closed for member in members)
    assert events == ["refused"] and pool.stats["authenticated"] == 3


def test_the_total_cap_counts_authenticated_connections_and_strangers_make_room() -> None:
    pool = ConnectionPool(ConnectionLimits(3, 2))
    member = Connection(pool)
    member.ticket.authenticate()
    strangers = [Connection(pool), Connection(pool)]
    newcomer = Connection(pool)
    assert [s.closed for s in strangers] == [True, False]
    assert not member.closed and not newcomer.closed
    assert pool.held == 3


def test_released_tickets_free_their_place_once() -> None:
    pool = ConnectionPool(ConnectionLimits(4, 2))
    first, second = Connection(pool), Connection(pool)
    second.ticket.authenticate()
    first.ticket.release()
    first.ticket.release()
    second.ticket.release()
    assert pool.held == 0
    third = Connection(pool)
    assert not third.closed


def test_an_evicted_or_released_ticket_cannot_authenticate_afterwards() -> None:
    pool = ConnectionPool(ConnectionLimits(4, 1))
    evicted = Connection(pool)
    Connection(pool)
    evicted.ticket.authenticate()
    released = pool.admit()
    assert released is not None
    released.release()
    released.authenticate()
    assert not evicted.ticket.authenticated and not released.authenticated
    assert pool.held == 0 and pool.stats["authenticated"] == 0


def test_a_ticket_evicted_before_its_connection_was_set_up_closes_it_on_attach() -> None:
    pool = ConnectionPool(ConnectionLimits(4, 1))
    pending = pool.admit()
    assert pending is not None
    Connection(pool)
    closed: list[bool] = []
    pending.attach(lambda: closed.append(True))
    assert closed == [True] and pending.evicted


def test_an_empty_pool_has_nothing_to_evict() -> None:
    pool = ConnectionPool(ConnectionLimits(2, 1))
    assert not pool.evict_one()


def test_tickets_count_what_happened_to_them() -> None:
    events: list[str] = []
    pool = ConnectionPool(ConnectionLimits(2, 1), on_event=events.append)
    ticket = pool.admit()
    assert ticket is not None
    ticket.note("head_timeout")
    assert events == ["head_timeout"] and pool.stats["head_timeout"] == 1
    ConnectionPool(ConnectionLimits(2, 1)).note("quiet")  # no listener: only counted
