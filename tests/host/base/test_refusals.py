"""`refusal_of`: one code and status per kind of failure, declared on its class."""

from __future__ import annotations

import pytest

from dsh.agents.errors import AgentClosed
from dsh.base.errors import CodedError, DshError, refusal_of
from dsh.host.errors import HostClosed, PersistenceUnavailable
from dsh.persistence.errors import CorruptLog, LeaseHeld, SessionNotFound, StorageError
from dsh.plugins.errors import ActionError
from dsh.session.errors import FlushError, InvalidSessionId, SessionLiveElsewhere
from dsh.session.log import Session


@pytest.mark.parametrize(
    ("error", "code", "status"),
    [
        (InvalidSessionId("../x"), "invalid_session_id", 404),
        (SessionNotFound("session s1 is not stored"), "session_not_found", 404),
        (SessionLiveElsewhere("session s1 is live on host b", "b"), "session_live_elsewhere", 409),
        (HostClosed("the host is closing"), "host_closed", 503),
        (PersistenceUnavailable("not stored"), "persistence_unavailable", 503),
        (
            FlushError(Session.new("s1", cwd="/", created_at=0), [OSError("disk")]),
            "persistence_failed",
            503,
        ),
        (AgentClosed("agent s1 is closed"), "session_closed", 409),
        (ActionError.conflict("already done"), "conflict", 409),
        (CorruptLog("/x.jsonl", 3, "not JSON"), "storage_corrupt", 500),
        (StorageError("the database is away"), "storage_unavailable", 503),
        (LeaseHeld("s1", "b", None), "storage_unavailable", 503),
        (OSError("EIO"), "storage_unavailable", 503),
    ],
)
def test_each_known_failure_has_its_code_and_status(
    error: Exception, code: str, status: int
) -> None:
    refusal = refusal_of(error)
    assert isinstance(refusal, CodedError)
    assert (refusal.code, refusal.status) == (code, status)
    if not isinstance(error, CodedError):
        assert str(error) in refusal.message  # the failure's own words, for the person


def test_a_plugins_refusal_is_itself_and_an_unexpected_failure_is_none() -> None:
    refused = ActionError.invalid("args: bad")
    assert refusal_of(refused) is refused
    assert refusal_of(RuntimeError("a bug")) is None
    closed = refusal_of(AgentClosed("agent s1 is closed"))
    assert closed is not None and closed.message.endswith("; resume the session and retry")


def test_the_answer_comes_from_the_class_whatever_else_it_also_is() -> None:
    class Ours(DshError):
        """Declares nothing: a client is told nothing of it."""

    class Gone(SessionNotFound):
        """Inherits its parent's answer."""

    class Teapot(StorageError, LookupError):
        code = "teapot"
        status = 418

    assert refusal_of(Ours("internal detail")) is None
    gone = refusal_of(Gone("session s1 went away"))
    assert gone is not None and (gone.code, gone.status) == ("session_not_found", 404)
    assert gone.message == "session s1 went away"
    teapot = refusal_of(Teapot("short and stout"))
    assert teapot is not None and (teapot.code, teapot.status) == ("teapot", 418)
    assert teapot.message == "storage failed: short and stout"
