"""Where a lane's `dsh` command comes from: this checkout, or wheels built from it.

`SOURCE` runs the checkout's interpreter (`python -m dsh.cli`, the editable
installs of `.venv`). `build_wheels_install(workdir)` builds the four
distributions with `pip wheel --no-deps`, creates a fresh virtual environment
with `python -m venv`, and installs the wheels into it (their dependencies come
from the package index), so the lane runs `<venv>/bin/dsh` exactly as a user
who installed the wheels would. Nothing is cached between runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.webhost import REPO, WebHost

__all__ = [
    "DISTRIBUTIONS",
    "SOURCE",
    "Install",
    "build_wheels_install",
    "run",
]

DISTRIBUTIONS = {
    "dsh-host": REPO,
    "dsh-tool-schedule": REPO / "plugins" / "tool-schedule",
    "dsh-client-ui-schedule": REPO / "plugins" / "client-ui-schedule",
    "dsh-notify": REPO / "plugins" / "notify",
}
"""Each distribution of this repository and the directory it is built from."""


def run(command: list[str], *, cwd: Path = REPO, timeout: float = 300) -> str:
    """Run `command`; return its output, or fail the test with the output if it fails."""
    done = subprocess.run(
        command,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"{command} exited with {done.returncode}:\n{done.stdout}")
    return done.stdout


@dataclass(frozen=True)
class Install:
    """One installation of dsh: how to start `dsh`, and the interpreter that has it."""

    name: str
    python: str
    dsh: list[str] | None = None
    """The `dsh` command; None runs `python -m dsh.cli` with `python`."""
    wheels: tuple[Path, ...] = ()

    def command(self, *args: str) -> list[str]:
        base = self.dsh or [self.python, "-m", "dsh.cli"]
        return [*base, *args]

    @contextmanager
    def web(self, data_dir: Path, **options: Any) -> Iterator[WebHost]:
        """`WebHost.start` running this installation's `dsh web`."""
        with WebHost.start(data_dir, python=self.python, dsh=self.dsh, **options) as web:
            yield web

    def probe(self, code: str, *, cwd: Path) -> Any:
        """Run `code` with this installation's interpreter and parse what it prints as JSON."""
        return json.loads(run([self.python, "-c", code], cwd=cwd))


SOURCE = Install(name="source", python=sys.executable)


def build_wheels_install(workdir: Path) -> Install:
    """Build the four wheels and install them into a fresh venv under `workdir`."""
    wheel_dir = workdir / "wheels"
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            "--disable-pip-version-check",
            "--wheel-dir",
            str(wheel_dir),
            *(str(path) for path in DISTRIBUTIONS.values()),
        ]
    )
    wheels = tuple(sorted(wheel_dir.glob("*.whl")))
    venv = workdir / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    python = str(venv / "bin" / "python")
    run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            *(str(wheel) for wheel in wheels),
        ],
        cwd=workdir,
    )
    return Install(name="wheels", python=python, dsh=[str(venv / "bin" / "dsh")], wheels=wheels)
