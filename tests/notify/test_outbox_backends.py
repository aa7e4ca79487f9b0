"""`outbox_for`: the outbox is kept where the Host keeps its Sessions."""

from __future__ import annotations

from pathlib import Path

from dsh_notify.outbox import JsonlOutbox, MemoryOutbox, outbox_for
from dsh_notify.outbox.postgres import PostgresOutbox

from dsh import StorageLocation


def test_each_store_gets_its_outbox(tmp_path: Path) -> None:
    jsonl = outbox_for(StorageLocation("jsonl", data_dir=tmp_path))
    assert isinstance(jsonl, JsonlOutbox) and jsonl.path.parent == tmp_path
    url = "postgresql://dsh:pw@db/dsh"
    pg = outbox_for(StorageLocation("postgresql", url=url, schema="s"))
    assert isinstance(pg, PostgresOutbox) and pg.schema == "s"
    assert "pw" not in pg.description
    default = outbox_for(StorageLocation("postgresql", url=url))
    assert isinstance(default, PostgresOutbox) and default.schema == "dsh"
    assert isinstance(outbox_for(StorageLocation()), MemoryOutbox)
    assert isinstance(outbox_for(StorageLocation("jsonl")), MemoryOutbox)
    assert isinstance(outbox_for(StorageLocation("postgresql")), MemoryOutbox)
