"""`dsh store copy SRC DST`: the command around `copy_store` — its words, its refusals,
its progress on stderr."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest

from dsh import StorageLocation, hookimpl
from dsh.cli.transfer.plugins import copy_plugin_records
from dsh.persistence.jsonl import DataDirLock, JsonlBackend
from dsh.persistence.postgres.notify import channel
from dsh.plugins.overlay import Overlay
from dsh.web.running import remember_overlay
from tests.host.persistence.contract import events, header

from ..fixtures.distributions import FakeSite
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


# -- the plugins' own records (dsh_store_copy) -------------------------------------------


def copier_overlay(tmp_path: Path, *names: str) -> Path:
    path = tmp_path / "overlay.toml"
    path.write_text("".join(f"[plugins.{name}]\n" for name in names), encoding="utf-8")
    return path


def test_the_overlays_plugins_copy_their_own_records_and_say_so(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("copier", "RecordsCopier")
    site.plugin("quiet", "QuietCopier")
    source = jsonl_store(tmp_path / "a")
    layout = copier_overlay(tmp_path, "copier", "quiet")
    done = dsh("store", "copy", source, f"jsonl:{tmp_path / 'b'}", "--overlay", str(layout))
    assert done.code == 0, done.err
    assert done.out.splitlines()[-1] == "copier: 1 record"
    asked = json.loads((tmp_path / "b" / "copier.json").read_text(encoding="utf-8"))
    assert asked == {"source": str(tmp_path / "a"), "kind": "jsonl"}
    assert "were not copied" not in done.err


def test_the_overlay_the_source_remembers_is_used_without_one_given(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("copier", "RecordsCopier")
    source = jsonl_store(tmp_path / "a")
    remember_overlay(tmp_path / "a", copier_overlay(tmp_path, "copier"))
    done = dsh("store", "copy", source, f"jsonl:{tmp_path / 'b'}")
    assert done.code == 0, done.err
    assert "copier: 1 record" in done.out
    assert (tmp_path / "b" / "copier.json").exists()


def test_without_an_overlay_the_person_is_told_what_stays_behind(dsh: Cli, tmp_path: Path) -> None:
    done = dsh("store", "copy", jsonl_store(tmp_path / "a"), f"jsonl:{tmp_path / 'b'}")
    assert done.code == 0, done.err
    assert "records plugins keep beside the Sessions" in done.err
    assert "pass --overlay PATH" in done.err


def test_a_plugin_that_cannot_copy_stops_the_copy_naming_it(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("copier", "BrokenCopier")
    source = jsonl_store(tmp_path / "a")
    layout = copier_overlay(tmp_path, "copier")
    failed = dsh("store", "copy", source, f"jsonl:{tmp_path / 'b'}", "--overlay", str(layout))
    assert failed.code == 1
    assert "plugin 'copier' could not copy its own records" in failed.err
    assert "the copier's file is unreadable" in failed.err
    assert "run the copy again" in failed.err
    assert (tmp_path / "b" / "sessions" / "s1.jsonl").exists()  # the host's records are there


def test_a_broken_overlay_is_one_line(dsh: Cli, tmp_path: Path) -> None:
    broken = tmp_path / "overlay.toml"
    broken.write_text("[plugins\n", encoding="utf-8")
    source = jsonl_store(tmp_path / "a")
    refused = dsh("store", "copy", source, f"jsonl:{tmp_path / 'b'}", "--overlay", str(broken))
    assert refused.code == 1
    assert str(broken) in refused.err


class Counting:
    """Counts the copies it was asked for, in-process."""

    def __init__(self, context: object) -> None:
        self.asked: list[tuple[str, str]] = []

    @hookimpl
    def dsh_store_copy(self, source: StorageLocation, target: StorageLocation) -> Any:
        self.asked.append((source.kind, target.kind))
        return None


def test_copy_plugin_records_asks_each_plugin_once_with_both_locations(tmp_path: Path) -> None:
    async def main() -> None:
        source = StorageLocation("jsonl", data_dir=tmp_path / "a")
        target = StorageLocation("postgresql", url="postgresql://h/db", schema="dsh")
        assert await copy_plugin_records(Overlay.default(), source, target) == []
        from dsh.host.host import Host
        from dsh.models.absent import AbsentModel
        from dsh.persistence.memory import MemoryBackend

        async with Host(backend=MemoryBackend(), model=AbsentModel()) as host:
            counting = Counting(None)
            host.pm.register(counting, name="counting")
            answer = host.pm.hook.dsh_store_copy(source=source, target=target)
            assert answer == [] and counting.asked == [("jsonl", "postgresql")]

    anyio.run(main)
