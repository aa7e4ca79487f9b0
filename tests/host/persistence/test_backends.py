"""Choosing the store: `--store URL` / `$DSH_STORE`, backends registered by name."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dsh.persistence import DataDirLock, JsonlBackend, MemoryBackend
from dsh.persistence.backends import STORE_ENV, JsonlSettings, backend_kinds, choose_backend
from dsh.persistence.errors import BackendChoiceError
from dsh.persistence.postgres import PostgresBackend, PostgresSettings
from dsh.persistence.redact import redacted


def test_the_default_is_jsonl_in_the_data_dir(tmp_path: Path) -> None:
    choice = choose_backend(None, tmp_path, environ={})
    assert choice.kind.name == "jsonl"
    assert choice.settings == JsonlSettings(directory=tmp_path)
    backend = choice.open()
    assert isinstance(backend, JsonlBackend) and backend.directory == tmp_path / "sessions"
    lock = choice.writer_lock()
    assert isinstance(lock, DataDirLock) and lock.path == tmp_path / "lock"
    assert choice.describe() == str(tmp_path)


def test_the_url_wins_over_the_environment_which_wins_over_the_default(tmp_path: Path) -> None:
    environ = {STORE_ENV: f"jsonl:{tmp_path / 'env'}"}
    assert choose_backend(None, tmp_path, environ=environ).settings == JsonlSettings(
        directory=tmp_path / "env"
    )
    chosen = choose_backend(f"jsonl:{tmp_path / 'url'}", tmp_path, environ=environ)
    assert chosen.settings == JsonlSettings(directory=tmp_path / "url")


def test_jsonl_settings_come_from_the_query_and_an_empty_location_is_the_data_dir(
    tmp_path: Path,
) -> None:
    chosen = choose_backend("JSONL:?sidecars=no", tmp_path, environ={})
    assert chosen.settings == JsonlSettings(directory=tmp_path, sidecars=False)
    capped = choose_backend("jsonl:?open_logs=16", tmp_path, environ={})
    assert capped.settings == JsonlSettings(directory=tmp_path, open_logs=16)
    assert JsonlSettings(directory=tmp_path).open_logs == 256
    whole = choose_backend("jsonl:?syncfs=no", tmp_path, environ={})
    assert whole.settings == JsonlSettings(directory=tmp_path, syncfs=False)
    assert whole.open()._files._syncers.filesystem is False  # type: ignore[attr-defined]
    assert JsonlSettings(directory=tmp_path).syncfs is True
    home = choose_backend("jsonl:~/somewhere", tmp_path, environ={})
    assert home.settings == JsonlSettings(directory=Path("~/somewhere").expanduser())


def test_memory_is_volatile_and_needs_no_lock(tmp_path: Path) -> None:
    chosen = choose_backend("memory:", tmp_path, environ={})
    assert isinstance(chosen.open(), MemoryBackend)
    assert chosen.writer_lock() is None
    assert chosen.open() is not chosen.open()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgres://localhost", "names no database"),
        ("postgresql://u:secret@localhost/", r"postgresql://u@localhost/ names no database"),
        ("postgresql://h/db?schema=Bad-Name", "schema: Value error, not a schema name"),
        ("postgresql://h/db?pool_size=0", "pool_size: Input should be greater than or equal to 1"),
        ("postgresql://h/db?schema=a&schema=b", "'schema' is given twice"),
        ("sqlite:data.db", "unknown store 'sqlite'"),
        ("/just/a/path", "is not NAME:LOCATION"),
        (":nothing", "is not NAME:LOCATION"),
        ("memory:somewhere", "memory: takes no location"),
        ("jsonl:/x?sidecars=perhaps", "sidecars: Input should be a valid boolean"),
        ("jsonl:/x?shards=4", "shards: Extra inputs are not permitted"),
        ("jsonl:/x?open_logs=0", "open_logs: Input should be greater than or equal to 1"),
        ("jsonl:/x?directory=/y", "'directory' is given twice"),
    ],
)
def test_a_store_that_cannot_be_used_is_refused_with_a_clear_reason(
    tmp_path: Path, url: str, message: str
) -> None:
    with pytest.raises(BackendChoiceError, match=message):
        choose_backend(url, tmp_path, environ={})


def test_backends_are_registered_by_name_each_with_its_settings_model() -> None:
    kinds = backend_kinds()
    assert sorted(kinds) == ["jsonl", "memory", "postgres", "postgresql"]
    assert kinds["jsonl"].settings is JsonlSettings
    assert backend_kinds() is not kinds  # built per call: no module-level registry


def test_a_postgresql_url_goes_to_libpq_whole_but_for_dshs_own_parameters(
    tmp_path: Path,
) -> None:
    chosen = choose_backend(
        "postgresql://me:pw@db.example:5433/dsh?sslmode=require&schema=prod&pool_size=4",
        tmp_path,
        environ={},
    )
    settings = chosen.settings
    assert isinstance(settings, PostgresSettings)
    assert settings.url == "postgresql://me:pw@db.example:5433/dsh?sslmode=require"
    assert (settings.schema_name, settings.pool_size) == ("prod", 4)
    assert chosen.writer_lock() is None  # leases, not a lock, keep writers apart
    assert chosen.describe() == "postgresql://me@db.example:5433/dsh?sslmode=require (schema prod)"
    assert isinstance(chosen.open(), PostgresBackend)
    plain = choose_backend("postgres:///dsh?host=/run/postgresql", tmp_path, environ={})
    assert plain.describe() == "postgres:///dsh?host=/run/postgresql"


def test_a_password_never_shows_in_a_message(tmp_path: Path) -> None:
    with pytest.raises(BackendChoiceError) as info:
        choose_backend("postgresql://me:hunter2@h/?password=also&x=1", tmp_path, environ={})
    assert "hunter2" not in str(info.value) and "also" not in str(info.value)
    assert redacted("postgresql://me:hunter2@h/db?password=also") == (
        "postgresql://me@h/db?password=***"
    )
    assert redacted("postgresql://[::1") == "<a malformed URL>"


def test_without_psycopg_the_postgresql_store_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "dsh.persistence.postgres", None)
    assert "postgresql" not in backend_kinds()
    with pytest.raises(BackendChoiceError, match=r"needs psycopg.*dsh-host\[postgresql\]"):
        choose_backend("postgresql://h/db", tmp_path, environ={})
