"""`dsh store migrate`: the store's tables, created or upgraded, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh.persistence.postgres import SCHEMA_VERSION
from tests.support.postgres import PostgresServer

from .conftest import Cli


def test_a_jsonl_store_needs_no_migrations(dsh: Cli, tmp_path: Path) -> None:
    result = dsh("store", "migrate", "--data-dir", str(tmp_path))
    assert (result.code, result.err) == (0, "")
    assert result.out == f"the jsonl store {tmp_path} needs no migrations\n"


@pytest.mark.pg
def test_a_postgresql_store_is_migrated_once_and_then_up_to_date(dsh: Cli, pg_url: str) -> None:
    first = dsh("store", "migrate", "--store", pg_url)
    assert first.code == 0, first.err
    assert f"migrated from version 0 to {SCHEMA_VERSION}" in first.out
    again = dsh("store", "migrate", "--store", pg_url)
    assert again.code == 0 and f"is up to date (version {SCHEMA_VERSION})" in again.out


@pytest.mark.pg
def test_a_missing_database_is_one_line_naming_the_url_without_its_password(
    dsh: Cli, postgres: PostgresServer
) -> None:
    url = postgres.admin_url("nowhere").replace("dsh@", "dsh:s3cret@")
    result = dsh("store", "migrate", "--store", url)
    assert result.code == 1
    assert result.err.startswith("dsh: error: PostgreSQL at postgresql://dsh@/nowhere?")
    assert 'database "nowhere" does not exist (create it first: createdb nowhere)' in result.err
    assert "s3cret" not in result.err and result.err.count("\n") == 1


def test_an_unreachable_server_is_one_line_naming_the_url(dsh: Cli, tmp_path: Path) -> None:
    url = f"postgresql://someone:pw@/dsh?host={tmp_path}&connect_timeout=2"
    result = dsh("store", "migrate", "--store", url)
    assert result.code == 1
    assert result.err.startswith(
        f"dsh: error: PostgreSQL at postgresql://someone@/dsh?host={tmp_path}"
    )
    assert "cannot be reached" in result.err and ":pw@" not in result.err
    assert "Traceback" not in result.err
