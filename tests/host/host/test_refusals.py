"""`refusal_of`: one code and status per kind of failure, wherever it is answered."""

from __future__ import annotations

import pytest

from dsh.agents.agent import AgentClosed
from dsh.base.errors import ActionError, CodedError
from dsh.host.host import HostClosed, PersistenceUnavailable, SessionNotFound
from dsh.host.refusals import refusal_of
from dsh.persistence.backend import CorruptLog, StorageError
from dsh.session.live import FlushError
from dsh.session.log import InvalidSessionId, Session


@pytest.mark.parametrize(
    ("error", "code", "status"),
    [
        (InvalidSessionId("../x"), "invalid_session_id", 404),
        (SessionNotFound("session s1 is not stored"), "session_not_found", 404),
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
