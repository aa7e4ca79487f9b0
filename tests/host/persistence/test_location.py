"""`StorageLocation`: where a Host keeps its Sessions, as a plugin reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

import dsh
from dsh.host.host import Host
from dsh.persistence.jsonl import JsonlBackend
from dsh.persistence.location import StorageLocation, location_of
from dsh.persistence.memory import MemoryBackend
from dsh.persistence.postgres.backend import PostgresBackend
from dsh.persistence.postgres.settings import PostgresSettings
from dsh.plugins.context import PluginContext
from dsh.testing import FakeClock, FakeModel

pytestmark = pytest.mark.anyio


def test_a_jsonl_store_is_its_data_dir(tmp_path: Path) -> None:
    assert location_of(JsonlBackend(tmp_path)) == StorageLocation("jsonl", data_dir=tmp_path)


def test_a_postgresql_store_is_its_url_and_schema_and_says_it_without_the_password() -> None:
    settings = PostgresSettings.model_validate(
        {"url": "postgresql://dsh:s3cret@db.example/dsh", "schema": "team"}
    )
    location = location_of(PostgresBackend(settings))
    assert (location.kind, location.url, location.schema) == (
        "postgresql",
        "postgresql://dsh:s3cret@db.example/dsh",
        "team",
    )
    assert location.redacted_url is not None and "s3cret" not in location.redacted_url


def test_any_other_store_is_memory() -> None:
    location = location_of(MemoryBackend())
    assert location == StorageLocation() and location.kind == "memory"
    assert location.redacted_url is None and location.data_dir is None


class Keeper:
    """Keeps its context, as a plugin does."""

    def __init__(self, context: PluginContext[None]) -> None:
        self.context = context


async def test_a_plugin_of_a_running_host_gets_the_store_the_alerts_and_the_actions(
    tmp_path: Path,
) -> None:
    from dsh.testing import load_plugin

    async with Host(backend=JsonlBackend(tmp_path), model=FakeModel(), clock=FakeClock()) as host:
        keeper, _ = await load_plugin(host, Keeper, name="keeper")
        context = keeper.context
        assert context.storage == StorageLocation("jsonl", data_dir=tmp_path)
        assert context.alerts is host.attention and context.actions is host.actions


async def test_a_context_without_a_host_says_so_when_used() -> None:
    context = PluginContext(
        name="alone", config=None, scope=dsh.Scope(), live=dsh.LiveSessions(FakeClock()),
        clock=FakeClock(), group=None,  # type: ignore[arg-type]
    )  # fmt: skip

    async def sink(alerts: object) -> None:
        raise AssertionError("never called")

    context.alerts.subscribe(sink, scope=context.scope)  # accepted, never fed
    with pytest.raises(RuntimeError, match="no Host: there are no alerts"):
        await context.alerts.read("aaaaaaaaaaaaaaaa", 1)
    with pytest.raises(RuntimeError, match="no Host: there are no Sessions"):
        await context.actions.run("aaaaaaaaaaaaaaaa", "p", "a", {})
    assert context.storage.kind == "memory"
