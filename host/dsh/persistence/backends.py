"""Choosing the store (DESIGN §4, public): `--store URL`, else `$DSH_STORE`, else JSONL.

    jsonl:DIR               the JSONL store in DIR (the default: jsonl:<data dir>)
    jsonl:DIR?sidecars=no   … keeping line indexes in memory only
    jsonl:DIR?open_logs=N   … holding at most N logs open for appending (default 256)
    memory:                 a volatile store (tests, demos): nothing survives the process
    postgresql://…          the PostgreSQL store, for several hosts on one database
                            (`dsh.persistence.postgres.settings`; needs the
                            `postgresql` extra: psycopg)

Each kind of store is registered by name (`BackendKind`) with its own settings
model, a strict pydantic model that validates what the URL says (its query
parameters are fields; an unknown one is an error naming it — except for a
kind that reads the whole URL itself, like PostgreSQL, whose query belongs
to libpq). A `BackendChoice`
opens the backend and, for the JSONL store, the lock that keeps one writing
`dsh web` per directory (`DataDirLock`); read-only commands never take it.
The registry is built per call (`backend_kinds()`): no module-level state.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .backend import Backend
from .errors import BackendChoiceError
from .jsonl import DataDirLock, JsonlBackend
from .jsonl.backend import DEFAULT_OPEN_LOGS
from .memory import MemoryBackend
from .redact import redacted

__all__ = [
    "STORE_ENV",
    "BackendChoice",
    "BackendKind",
    "JsonlSettings",
    "MemorySettings",
    "backend_kinds",
    "choose_backend",
]

STORE_ENV = "DSH_STORE"
# Named in DESIGN §4; refused with a clear message where psycopg is not installed.
_PLANNED = {"postgresql": "PostgreSQL", "postgres": "PostgreSQL"}


class JsonlSettings(BaseModel):
    """`jsonl:DIR[?sidecars=yes|no][&open_logs=N][&syncfs=yes|no]`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    directory: Path
    sidecars: bool = True
    open_logs: int = Field(DEFAULT_OPEN_LOGS, ge=1)
    syncfs: bool = True


class MemorySettings(BaseModel):
    """`memory:` takes no settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True, slots=True)
class BackendKind:
    """One kind of store: its name (the URL scheme), its settings model, how to open it.

    `fields(location, default_dir)` turns the part of the URL after `NAME:`
    (without the query) into settings fields; `lock(settings)` is the
    one-writer guard `dsh web` must hold, if the store needs one;
    `describe(settings)` names the store in messages ("no sessions in …").
    With `whole_url`, `fields` gets everything after `NAME:`, query included,
    and the query is not read as settings.
    """

    name: str
    settings: type[BaseModel]
    fields: Callable[[str, Path], dict[str, Any]]
    open: Callable[[Any], Backend]
    lock: Callable[[Any], DataDirLock | None]
    describe: Callable[[Any], str]
    whole_url: bool = False


@dataclass(frozen=True, slots=True)
class BackendChoice:
    """A validated store: what `--store` (or its default) selected."""

    kind: BackendKind
    settings: BaseModel

    def open(self) -> Backend:
        """A new backend over this store (nothing is read until it is used)."""
        return self.kind.open(self.settings)

    def writer_lock(self) -> DataDirLock | None:
        """The lock a writing process holds for its lifetime, or None if none is needed."""
        return self.kind.lock(self.settings)

    def describe(self) -> str:
        return self.kind.describe(self.settings)

    def prepare(self) -> str | None:
        """Make the store ready (`Backend.prepare`: tables, migrations), on an event loop
        of its own; returns what was done, None if nothing needs doing. Raises
        `StorageError` naming the store."""
        backend = self.open()

        async def run() -> str | None:
            try:
                return await backend.prepare()
            finally:
                await backend.aclose()

        return anyio.run(run)


def _jsonl_fields(location: str, default_dir: Path) -> dict[str, Any]:
    directory = Path(location).expanduser() if location else default_dir
    return {"directory": directory}


def _no_fields(location: str, default_dir: Path) -> dict[str, Any]:
    if location:
        raise BackendChoiceError(f"memory: takes no location, not {location!r}")
    return {}


def _postgres_kinds() -> list[BackendKind]:
    try:
        from .postgres import PostgresBackend, PostgresSettings
        from .postgres.settings import split_url
    except ImportError:  # psycopg is not installed: the kind stays "planned"
        return []

    def fields(scheme: str) -> Callable[[str, Path], dict[str, Any]]:
        def parse(rest: str, default_dir: Path) -> dict[str, Any]:
            try:
                return split_url(scheme, rest)
            except ValueError as error:
                raise BackendChoiceError(f"store {f'{scheme}:{rest}'!r}: {error}") from None

        return parse

    return [
        BackendKind(
            name=scheme,
            settings=PostgresSettings,
            fields=fields(scheme),
            open=lambda s: PostgresBackend(s),
            lock=lambda s: None,  # several hosts share it: leases decide who writes what
            describe=lambda s: s.describe(),
            whole_url=True,
        )
        for scheme in ("postgresql", "postgres")
    ]


def backend_kinds() -> dict[str, BackendKind]:
    """Every store this version knows, by name."""
    kinds = [
        *_postgres_kinds(),
        BackendKind(
            name="jsonl",
            settings=JsonlSettings,
            fields=_jsonl_fields,
            open=lambda s: JsonlBackend(
                s.directory, sidecars=s.sidecars, max_open_logs=s.open_logs, syncfs=s.syncfs
            ),
            lock=lambda s: DataDirLock(s.directory),
            describe=lambda s: str(s.directory),
        ),
        BackendKind(
            name="memory",
            settings=MemorySettings,
            fields=_no_fields,
            open=lambda s: MemoryBackend(),
            lock=lambda s: None,
            describe=lambda s: "memory (kept only while the process runs)",
        ),
    ]
    return {kind.name: kind for kind in kinds}


def choose_backend(
    url: str | None,
    data_dir: Path,
    *,
    environ: Mapping[str, str] | None = None,
    kinds: Mapping[str, BackendKind] | None = None,
) -> BackendChoice:
    """The store `url` names, else `$DSH_STORE`, else `jsonl:<data_dir>`.

    Raises `BackendChoiceError` naming the problem: an unknown or unavailable kind,
    or settings its model refuses.
    """
    env = os.environ if environ is None else environ
    given = url or env.get(STORE_ENV) or f"jsonl:{data_dir}"
    try:
        return _choose(given, data_dir, backend_kinds() if kinds is None else kinds)
    except BackendChoiceError as error:
        # A message never shows a password the URL carried.
        shown = redacted(given) if "://" in given else given
        raise BackendChoiceError(str(error).replace(repr(given), repr(shown))) from None


def _choose(chosen: str, data_dir: Path, available: Mapping[str, BackendKind]) -> BackendChoice:
    name, colon, rest = chosen.partition(":")
    name = name.lower()
    if not colon or not name:
        raise BackendChoiceError(
            f"store {chosen!r} is not NAME:LOCATION; use jsonl:DIR (the default) or memory:"
        )
    if name in _PLANNED and name not in available:
        raise BackendChoiceError(
            f"the {_PLANNED[name]} store needs psycopg, which is not installed: "
            "pip install 'dsh-host[postgresql]' (or use jsonl:DIR, the default)"
        )
    kind = available.get(name)
    if kind is None:
        raise BackendChoiceError(
            f"unknown store {name!r} in {chosen!r}; known: {', '.join(sorted(available))}"
        )
    if kind.whole_url:
        return _validated(chosen, kind, kind.fields(rest, data_dir))
    location, _, query = rest.partition("?")
    fields = kind.fields(location, data_dir)
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key in fields:
            raise BackendChoiceError(f"store {chosen!r}: {key!r} is given twice")
        fields[key] = value
    return _validated(chosen, kind, fields)


def _validated(chosen: str, kind: BackendKind, fields: dict[str, Any]) -> BackendChoice:
    try:
        settings = kind.settings.model_validate(fields)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in item['loc']) or 'settings'}: {item['msg']}"
            for item in error.errors(include_url=False, include_input=False)
        )
        raise BackendChoiceError(f"store {chosen!r}: {problems}") from None
    return BackendChoice(kind, settings)
