"""The test suite's own PostgreSQL server starts, answers, and leaves nothing behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.postgres import PostgresUnavailable, find_binary, running_postgres


def test_a_cluster_starts_answers_on_its_socket_and_is_removed_afterwards() -> None:
    with running_postgres() as server:
        root = server.root
        assert server.is_running()
        assert server.psql("SELECT current_database() || ' ' || current_user") == "dsh dsh"
        assert f"host={server.sockets}" in server.url
        pid = int((server.data / "postmaster.pid").read_text().split()[0])
    assert not root.exists()
    assert not alive(pid)  # the postmaster is gone, not merely detached


def alive(pid: int) -> bool:
    """True while `pid` runs; a zombie waiting for init to reap it counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def test_the_server_is_stopped_even_when_the_test_body_fails() -> None:
    with pytest.raises(RuntimeError, match="boom"), running_postgres() as server:
        data = server.data
        raise RuntimeError("boom")
    assert not data.exists()


def test_a_missing_binary_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("DSH_PG_BIN", "/nonexistent")
    monkeypatch.setattr("tests.support.postgres.Path.glob", lambda self, pattern: iter(()))
    with pytest.raises(PostgresUnavailable, match="install Debian's postgresql"):
        find_binary("initdb")
