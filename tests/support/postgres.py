"""A real PostgreSQL server for tests: `initdb` + `pg_ctl` in a temporary directory.

The server listens on a unix socket only (no TCP port, so parallel runs never
collide), trusts local connections, and is stopped — and its directory
removed — when the context exits, even if the test failed. PostgreSQL refuses
to run as root, so under root the cluster belongs to the `postgres` system
user (Debian's package creates it) and the server runs as that user.

`fsync=off` by default: the tests kill dsh hosts, not the database, and the
operating system keeps what a killed client committed; an fsync per commit
would only slow the suite. The benchmarks ask for `fsync=True` (the defaults).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PostgresServer", "PostgresUnavailable", "find_binary", "running_postgres"]

SYSTEM_USER = "postgres"
DATABASE = "dsh"
ROLE = "dsh"
PORT = 5432  # only names the socket file `.s.PGSQL.5432` inside our own directory


class PostgresUnavailable(RuntimeError):
    """The PostgreSQL server binaries are not installed (or cannot run here)."""


def find_binary(name: str) -> Path:
    """`initdb`, `pg_ctl`, … from `$DSH_PG_BIN`, Debian's versioned dirs, or `PATH`."""
    candidates: list[Path] = []
    if override := os.environ.get("DSH_PG_BIN"):
        candidates.append(Path(override) / name)
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0,
        reverse=True,
    )
    candidates.extend(path / name for path in versions)
    if found := shutil.which(name):
        candidates.append(Path(found))
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise PostgresUnavailable(
        f"PostgreSQL's {name} was not found: install Debian's postgresql package "
        "(./scripts/test does it when run as root) or set DSH_PG_BIN"
    )


@dataclass(slots=True)
class PostgresServer:
    """One running cluster: `url` is a libpq URL for the `dsh` database."""

    root: Path
    data: Path
    sockets: Path
    owner: str | None  # the system user the server runs as, when we are root
    fsync: bool = False

    @property
    def url(self) -> str:
        return f"postgresql://{ROLE}@/{DATABASE}?host={self.sockets}&port={PORT}"

    def admin_url(self, database: str = "postgres") -> str:
        return f"postgresql://{ROLE}@/{database}?host={self.sockets}&port={PORT}"

    def run(self, *args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run a PostgreSQL binary as the cluster's owner."""
        command = [str(find_binary(str(args[0]))), *map(str, args[1:])]
        return subprocess.run(
            command,
            user=self.owner,
            check=check,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.root,
        )

    def psql(self, sql: str, database: str = DATABASE) -> str:
        """Run `sql` with psql and return its unaligned output."""
        done = self.run(
            "psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", self.admin_url(database),
            "-c", sql,
        )  # fmt: skip
        return done.stdout.strip()

    def start(self) -> None:
        self.run(
            "pg_ctl", "-D", self.data, "-l", self.root / "server.log", "-w", "-t", "60",
            "-o", f"-k {self.sockets} -c listen_addresses='' -p {PORT} "
            f"{'' if self.fsync else '-c fsync=off -c full_page_writes=off '}"
            "-c max_connections=200",
            "start",
        )  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        self.run("pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "60", "stop", check=False)

    def is_running(self) -> bool:
        return self.run("pg_ctl", "-D", self.data, "status", check=False).returncode == 0

    def log_text(self) -> str:
        path = self.root / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""


@contextlib.contextmanager
def running_postgres(*, fsync: bool = False) -> Iterator[PostgresServer]:
    """Create a cluster in a fresh temporary directory, start it, and yield it.

    `fsync=True` keeps PostgreSQL's durable defaults (the benchmarks).

    The directory is made under the system's temp dir rather than pytest's
    `tmp_path`, whose root-only parents the `postgres` user cannot enter. On
    exit the server is stopped (immediately if a fast stop fails) and the
    directory removed. Raises `PostgresUnavailable` when the binaries are missing.
    """
    for name in ("initdb", "pg_ctl", "psql"):
        find_binary(name)
    owner = SYSTEM_USER if os.geteuid() == 0 else None
    root = Path(tempfile.mkdtemp(prefix="dsh-pg-"))
    server = PostgresServer(
        root=root, data=root / "data", sockets=root / "sockets", owner=owner, fsync=fsync
    )
    server.sockets.mkdir()
    if owner is not None:
        try:
            entry = pwd.getpwnam(owner)
        except KeyError:
            raise PostgresUnavailable(
                f"running as root needs the {owner!r} system user (Debian's postgresql creates it)"
            ) from None
        for path in (root, server.sockets):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    try:
        server.run(
            "initdb", "-D", server.data, "-A", "trust", "-U", ROLE, "-E", "UTF8",
            "--locale=C", "--no-sync", "--no-instructions",
        )  # fmt: skip
        server.start()
        try:
            server.psql(f"CREATE DATABASE {DATABASE}", database="postgres")
            yield server
        finally:
            server.stop()
            if server.is_running():
                server.stop("immediate")
    finally:
        shutil.rmtree(root, ignore_errors=True)
