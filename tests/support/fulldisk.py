"""A data directory on a disk that a test can fill and free.

    with FullDisk.open(tmp_path) as disk:
        ...  # use disk.directory as the data dir
        disk.fill()   # every write under it now fails with ENOSPC
        disk.free()   # space is back
        disk.take_inodes()  # real disk only: creating any file fails with ENOSPC
        disk.free()         # inodes are back too

Where this machine lets the test mount one (as root), the disk is a real
1 MiB tmpfs and `fill()` writes a filler file until the kernel answers
ENOSPC, so the host meets the real error at the real point (a short write,
a failing fsync). Elsewhere the disk is simulated: while a flag file exists,
`os.write` to any file under the directory raises `ENOSPC` — in this process
(`patch_writes`) or in a `dsh web` started through
`tests/reliability/wrapped_dsh.py` with `process_env()`. The test body is the
same either way; `real` says which one ran (`DSH_TEST_SIMULATE_FULL_DISK=1`
forces the simulation, to check it).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

__all__ = ["FLAG_ENV", "ROOT_ENV", "FullDisk"]

FLAG_ENV = "DSH_TEST_FULL_DISK_FLAG"
SIMULATE_ENV = "DSH_TEST_SIMULATE_FULL_DISK"  # set: simulate even where a tmpfs could be mounted
ROOT_ENV = "DSH_TEST_FULL_DISK_ROOT"
SIZE = "1m"
INODES = 256  # plenty for a data dir; few enough that a test can take them all


@dataclass
class FullDisk:
    directory: Path
    real: bool
    flag: Path
    _filler: Path | None = None
    _inodes: Path | None = None
    _patched: list[object] = field(default_factory=list)

    @classmethod
    @contextlib.contextmanager
    def open(cls, base: Path) -> Iterator[FullDisk]:
        mount = base / "disk"
        mount.mkdir()
        flag = base / "disk-is-full"
        mounted = (
            not os.environ.get(SIMULATE_ENV)
            and os.geteuid() == 0
            and shutil.which("mount") is not None
            and _mount(mount)
        )
        try:
            yield cls(directory=mount / "data", real=mounted, flag=flag)
        finally:
            if mounted:
                subprocess.run(["umount", "-l", str(mount)], check=False, capture_output=True)

    def fill(self) -> None:
        if not self.real:
            self.flag.write_text("full")
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        self._filler = self.directory.parent / "filler"
        chunk = b"\0" * 4096
        with contextlib.suppress(OSError), self._filler.open("wb", buffering=0) as filler:
            while True:
                filler.write(chunk)
        with contextlib.suppress(OSError), self._filler.open("ab", buffering=0) as filler:
            while True:  # the last few bytes, so that even a one-line append fails
                filler.write(b"\0")

    def take_inodes(self) -> int:
        """Create empty files until the real tmpfs has no inode left; how many were made.
        (A simulated disk has no inodes to take: only call this where `real`.)"""
        assert self.real, "only a real tmpfs can run out of inodes"
        self._inodes = self.directory.parent / "inodes"
        self._inodes.mkdir()
        made = 1
        while True:
            try:
                (self._inodes / str(made)).touch()
            except OSError as error:
                assert error.errno == errno.ENOSPC, error
                return made
            made += 1

    def free(self) -> None:
        if self._inodes is not None:
            shutil.rmtree(self._inodes)
            self._inodes = None
        if self._filler is not None:
            self._filler.unlink()
            self._filler = None
        self.flag.unlink(missing_ok=True)

    def process_env(self) -> dict[str, str]:
        """What a `wrapped_dsh.py` process needs to see the simulated disk (nothing if real)."""
        return {} if self.real else {FLAG_ENV: str(self.flag), ROOT_ENV: str(self.directory)}

    def patch_writes(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Simulate the full disk in this process too (does nothing on a real tmpfs)."""
        if not self.real:
            monkeypatch.setattr(os, "write", simulated_write(os.write, self.flag, self.directory))


def simulated_write(real_write: object, flag: Path, root: Path) -> object:
    prefix = str(root)

    def write(fd: int, data: bytes) -> int:
        if flag.exists():
            target = ""
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith(prefix + os.sep):
                raise OSError(errno.ENOSPC, "No space left on device (simulated)")
        return real_write(fd, data)  # type: ignore[operator, no-any-return]

    return write


def _mount(target: Path) -> bool:
    done = subprocess.run(
        [
            "mount",
            "-t",
            "tmpfs",
            "-o",
            f"size={SIZE},nr_inodes={INODES},mode=0700",
            "tmpfs",
            str(target),
        ],
        check=False,
        capture_output=True,
    )
    return done.returncode == 0
