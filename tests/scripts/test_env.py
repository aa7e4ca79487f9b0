"""`scripts/_env.sh`: `dsh_install` skips pip when no dependency file changed.

Run against a scratch tree whose `.venv/bin/python` is a stand-in that logs
each call, so what is checked is when pip would run, not pip itself.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.support.webhost import REPO

PYTHON = """#!/usr/bin/env bash
if [ "$1" = "--version" ]; then echo "Python 3.99.0"; exit 0; fi
echo "$*" >> "$(dirname "$0")/../../calls.log"
"""


def tree(tmp_path: Path) -> Path:
    (tmp_path / "plugins" / "one").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'host'\n", encoding="utf-8")
    (tmp_path / "plugins" / "one" / "pyproject.toml").write_text("one\n", encoding="utf-8")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(PYTHON, encoding="utf-8")
    python.chmod(0o755)
    return tmp_path


def install(root: Path, extra: str = "", **env: str) -> str:
    script = f'source "{REPO / "scripts" / "_env.sh"}" && dsh_install {extra}'
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=True,
    )
    return done.stdout


def pip_calls(root: Path) -> list[str]:
    log = root / "calls.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def test_a_second_install_with_nothing_changed_does_not_run_pip(tmp_path: Path) -> None:
    root = tree(tmp_path)

    first = install(root)
    second = install(root)

    assert pip_calls(root) == ["-m pip install -q --disable-pip-version-check -e . -e plugins/one/"]
    assert first.startswith("== installing")
    assert second == (
        "== .venv is up to date (no pyproject.toml changed; DSH_REINSTALL=1 reinstalls)\n"
    )


def test_a_changed_added_or_forced_dependency_file_installs_again(tmp_path: Path) -> None:
    root = tree(tmp_path)
    install(root)

    (root / "plugins" / "one" / "pyproject.toml").write_text("one, changed\n", encoding="utf-8")
    install(root)
    (root / "plugins" / "two").mkdir()
    (root / "plugins" / "two" / "pyproject.toml").write_text("two\n", encoding="utf-8")
    install(root)
    install(root, DSH_REINSTALL="1")
    install(root)

    assert len(pip_calls(root)) == 4
    assert pip_calls(root)[-1].endswith("-e . -e plugins/one/ -e plugins/two/")


def test_extras_have_their_own_stamp_and_cover_the_base_install(tmp_path: Path) -> None:
    root = tree(tmp_path)

    install(root, "dev,bench")
    install(root)  # the base install is part of the extras install
    install(root, "dev,bench")
    install(root, "dev")

    assert [call.split(" -e ")[1] for call in pip_calls(root)] == [".[dev,bench]", ".[dev]"]
