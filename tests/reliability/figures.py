"""The figures of one reliability run: everything the tests injected, tried and found.

Each test adds counters to its own section; at the end of the pytest session
the conftest writes them all to `test-output/reliability/figures.json` and
prints a summary. The numbers are the evidence behind the README's
"Reliability" section, so a test counts only what it really did.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["Figures"]


class Figures:
    """Counters by section (`crash`, `storage_faults`, `fuzz`, …), plus how the run was made."""

    def __init__(self, *, seed: int, long: bool) -> None:
        self._started = time.monotonic()
        self.run: dict[str, Any] = {"seed": seed, "long": long}
        self.sections: dict[str, dict[str, Any]] = {}

    def section(self, name: str) -> dict[str, Any]:
        """The mutable dict of one section (created empty on first use)."""
        return self.sections.setdefault(name, {})

    def count(self, section: str, key: str, amount: int = 1) -> None:
        """Add `amount` to the integer counter `key` of `section`."""
        values = self.section(section)
        values[key] = int(values.get(key, 0)) + amount

    def merge(self, section: str, counters: Mapping[str, int]) -> None:
        """Add every counter of `counters` to `section`."""
        for key, amount in counters.items():
            self.count(section, key, amount)

    def as_json(self) -> dict[str, Any]:
        run = {**self.run, "duration_seconds": round(time.monotonic() - self._started, 1)}
        return {"run": run, **{name: self.sections[name] for name in sorted(self.sections)}}

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.as_json(), indent=2, sort_keys=False) + "\n", "utf-8")
        return path

    def summary(self) -> list[str]:
        """One line per section: `name: key=value, …` (nested values as compact JSON)."""
        lines = [f"run: seed={self.run['seed']} long={self.run['long']}"]
        for name in sorted(self.sections):
            parts = []
            for key, value in self.sections[name].items():
                shown = value if isinstance(value, int | float | str) else json.dumps(value)
                parts.append(f"{key}={shown}")
            lines.append(f"{name}: " + ", ".join(parts))
        return lines
