"""`dsh store copy SRC DST`: the command around `copy_store` — its words, its refusals,
its progress on stderr."""

from __future__ import annotations

from pathlib import Path

import anyio
import psycopg
import pytest

from dsh.persistence.jsonl import DataDirLock, JsonlBackend
from dsh.persistence.postgres.notify import channel
from tests.host.persistence.contract import events, header

from .conftest import Cli


def jsonl_store(path: Path, sessions: int = 2) -> str:
    async def fill() -> None:
        backend = JsonlBackend(path)
        for number in range(sessions):
            await backend.initialize(header(f"s{number}"), events(0, 3))
        await backend.aclose()

    anyio.run(fill)
    return f"jsonl:{path}"


def test_a_copy_between_data_dirs_says_what_it_copied_and_then_that_nothing_is_left(
    dsh: Cli, tmp_path: Path
) -> None:
    source = jsonl_store(tmp_path / "a")
    first = dsh("store", "copy", source, f"jsonl:{tmp_path / 'b'}")
    assert first.code == 0, first.err
    assert first.out.startswith("copied 2 of 2 Sessions (0 in the trash; 6 events), ")
    assert f"from {tmp_path / 'a'} to {tmp_path / 'b'} in " in first.out
    # Not a terminal: plain lines, one per phase start and end.
    assert first.err.splitlines()[:2] == ["trash: 0/0", "sessions: 0/2"]
    assert "sessions: 2/2 (6 events)" in first.err
    assert (tmp_path / "b" / "sessions" / "s1.jsonl").read_bytes() == (
        tmp_path / "a" / "sessions" / "s1.jsonl"
    ).read_bytes()
    again = dsh("store", "copy", source, f"jsonl:{tmp_path / 'b'}")
    assert again.code == 0, again.err
    assert "already holds everything" in again.out and "nothing copied" in again.out


def test_a_data_dir_a_dsh_web_holds_is_refused_naming_its_pid(dsh: Cli, tmp_path: Path) -> None:
    source = jsonl_store(tmp_path / "a")
    with DataDirLock(tmp_path / "b"):
        refused = dsh("store", "copy", source, f"jsonl:{tmp_path / 'b'}")
    assert refused.code == 1
    assert refused.err.startswith(f"dsh: error: the data dir {tmp_path / 'b'} is in use")
    assert "PID" in refused.err and "stop it first" in refused.err
    assert not (tmp_path / "b" / "sessions").exists()


def test_what_cannot_be_copied_is_one_line_each(dsh: Cli, tmp_path: Path) -> None:
    source = jsonl_store(tmp_path / "a")
    cases = {
        (source, source): "SRC and DST are the same store",
        (source, "memory:"): "memory: keeps nothing",
        (f"jsonl:{tmp_path / 'none'}", source): "does not exist",
        (str(tmp_path), source): "is not NAME:LOCATION",
    }
    for (src, dst), said in cases.items():
        result = dsh("store", "copy", src, dst)
        assert result.code == 1 and said in result.err and result.err.count("\n") == 1, result


def test_a_conflict_is_named_and_the_exit_code_is_1(dsh: Cli, tmp_path: Path) -> None:
    source = jsonl_store(tmp_path / "a")
    jsonl_store(tmp_path / "b", sessions=1)
    (tmp_path / "b" / "sessions" / "s0.jsonl").write_bytes(
        (tmp_path / "a" / "sessions" / "s0.jsonl").read_bytes().replace(b"message 2", b"messageX2")
    )
    result = dsh("store", "copy", source, f"jsonl:{tmp_path / 'b'}")
    assert result.code == 1
    assert "another log (event 2 differs) under session id s0" in result.err


@pytest.mark.pg
def test_a_postgresql_store_a_host_uses_is_refused_naming_it(
    dsh: Cli, tmp_path: Path, pg_url: str
) -> None:
    source = jsonl_store(tmp_path / "a")
    assert dsh("store", "migrate", "--store", pg_url).code == 0
    schema = pg_url.rsplit("schema=", 1)[1]
    with psycopg.connect(pg_url.split("&schema=")[0], autocommit=True) as listening:
        listening.execute(f'LISTEN "{channel("events", schema)}"')
        refused = dsh("store", "copy", source, pg_url)
        assert refused.code == 1
        assert "is in use by a dsh web connected from a local socket" in refused.err
        assert "stop every dsh web on it first" in refused.err
        listening.execute(
            f'SET search_path TO "{schema}"; INSERT INTO leases VALUES'
            " ('s1', 'web-1:42:abc', 3, now(), now() + interval '1 minute')"
        )
        listening.execute("UNLISTEN *")
        refused = dsh("store", "copy", pg_url, f"jsonl:{tmp_path / 'c'}")
        assert "in use by the host web-1:42:abc, holding 1 Session" in refused.err
        listening.execute("UPDATE leases SET expires_at = now()")
    copied = dsh("store", "copy", source, pg_url)
    assert copied.code == 0, copied.err
    back = dsh("store", "copy", pg_url, f"jsonl:{tmp_path / 'c'}")
    assert back.code == 0, back.err
    assert (tmp_path / "c" / "sessions" / "s1.jsonl").read_bytes() == (
        tmp_path / "a" / "sessions" / "s1.jsonl"
    ).read_bytes()
