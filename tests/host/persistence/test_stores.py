"""Choosing the store: `--store URL` / `$DSH_STORE`, backends registered by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh.persistence import DataDirLock, JsonlBackend, MemoryBackend
from dsh.persistence.stores import (
    STORE_ENV,
    JsonlSettings,
    StoreError,
    choose_store,
    store_kinds,
)


def test_the_default_is_jsonl_in_the_data_dir(tmp_path: Path) -> None:
    choice = choose_store(None, tmp_path, environ={})
    assert choice.kind.name == "jsonl"
    assert choice.settings == JsonlSettings(directory=tmp_path)
    backend = choice.open()
    assert isinstance(backend, JsonlBackend) and backend.directory == tmp_path / "sessions"
    lock = choice.writer_lock()
    assert isinstance(lock, DataDirLock) and lock.path == tmp_path / "lock"
    assert choice.describe() == str(tmp_path)


def test_the_url_wins_over_the_environment_which_wins_over_the_default(tmp_path: Path) -> None:
    environ = {STORE_ENV: f"jsonl:{tmp_path / 'env'}"}
    assert choose_store(None, tmp_path, environ=environ).settings == JsonlSettings(
        directory=tmp_path / "env"
    )
    chosen = choose_store(f"jsonl:{tmp_path / 'url'}", tmp_path, environ=environ)
    assert chosen.settings == JsonlSettings(directory=tmp_path / "url")


def test_jsonl_settings_come_from_the_query_and_an_empty_location_is_the_data_dir(
    tmp_path: Path,
) -> None:
    chosen = choose_store("JSONL:?sidecars=no", tmp_path, environ={})
    assert chosen.settings == JsonlSettings(directory=tmp_path, sidecars=False)
    home = choose_store("jsonl:~/somewhere", tmp_path, environ={})
    assert home.settings == JsonlSettings(directory=Path("~/somewhere").expanduser())


def test_memory_is_volatile_and_needs_no_lock(tmp_path: Path) -> None:
    chosen = choose_store("memory:", tmp_path, environ={})
    assert isinstance(chosen.open(), MemoryBackend)
    assert chosen.writer_lock() is None
    assert chosen.open() is not chosen.open()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://user@localhost/dsh", "PostgreSQL store is not available in this version"),
        ("postgres://localhost", "PostgreSQL store is not available"),
        ("sqlite:data.db", "unknown store 'sqlite'"),
        ("/just/a/path", "is not NAME:LOCATION"),
        (":nothing", "is not NAME:LOCATION"),
        ("memory:somewhere", "memory: takes no location"),
        ("jsonl:/x?sidecars=perhaps", "sidecars: Input should be a valid boolean"),
        ("jsonl:/x?shards=4", "shards: Extra inputs are not permitted"),
        ("jsonl:/x?directory=/y", "'directory' is given twice"),
    ],
)
def test_a_store_that_cannot_be_used_is_refused_with_a_clear_reason(
    tmp_path: Path, url: str, message: str
) -> None:
    with pytest.raises(StoreError, match=message):
        choose_store(url, tmp_path, environ={})


def test_backends_are_registered_by_name_each_with_its_settings_model() -> None:
    kinds = store_kinds()
    assert sorted(kinds) == ["jsonl", "memory"]
    assert kinds["jsonl"].settings is JsonlSettings
    assert store_kinds() is not kinds  # built per call: no module-level registry
