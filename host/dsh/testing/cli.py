"""Running `dsh` and a plugin's commands in-process, as a person would type them.

`run_cli("clock", "Europe/Paris", plugins=["tool-clock"])` writes an overlay
enabling the named installed plugins (a mapping gives each its config table),
runs `dsh --overlay <it> clock Europe/Paris` with captured output and returns
a `CliResult`. A plugin command runs its own event loop (as `dsh` does), so
from an async test use `await arun_cli(...)`, which runs it in a worker thread.
"""

from __future__ import annotations

import io
import json
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio

from ..cli import main

__all__ = ["CliResult", "arun_cli", "run_cli"]


@dataclass(frozen=True, slots=True)
class CliResult:
    """What one `dsh` run did: its exit code and everything it wrote."""

    code: int
    out: str
    err: str


def run_cli(*argv: str, plugins: Sequence[str] | Mapping[str, Mapping[str, Any]] = ()) -> CliResult:
    """Run `dsh [--overlay OVERLAY] *argv`; `plugins` are the overlay's (none: no overlay)."""
    out, err = io.StringIO(), io.StringIO()
    if not plugins:
        code = main(list(argv), stdout=out, stderr=err)
        return CliResult(code, out.getvalue(), err.getvalue())
    tables = plugins if isinstance(plugins, Mapping) else {name: {} for name in plugins}
    with tempfile.TemporaryDirectory(prefix="dsh-cli-") as directory:
        overlay = Path(directory) / "overlay.toml"
        overlay.write_text(_overlay_text(tables), encoding="utf-8")
        code = main(["--overlay", str(overlay), *argv], stdout=out, stderr=err)
    return CliResult(code, out.getvalue(), err.getvalue())


async def arun_cli(
    *argv: str, plugins: Sequence[str] | Mapping[str, Mapping[str, Any]] = ()
) -> CliResult:
    """`run_cli` from an async test: in a worker thread, since `dsh` runs its own loop."""
    return await anyio.to_thread.run_sync(partial(run_cli, *argv, plugins=plugins))


def _overlay_text(tables: Mapping[str, Mapping[str, Any]]) -> str:
    lines: list[str] = []
    for name, config in tables.items():
        lines.append(f"[plugins.{_key(name)}]")
        lines += [f"{_key(key)} = {_value(value)}" for key, value in config.items()]
    return "\n".join(lines) + "\n"


def _key(key: str) -> str:
    return key if key.replace("-", "").replace("_", "").isalnum() else _value(key)


def _value(value: object) -> str:
    # TOML's basic strings, integers, floats and booleans read like JSON's.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return json.dumps(value)
    raise TypeError(f"run_cli writes only strings, numbers and booleans, not {value!r}")
