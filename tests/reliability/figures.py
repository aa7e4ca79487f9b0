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

__all__ = ["FIGURES_PATH", "REPO", "SEED_ENV", "Figures"]

SEED_ENV = "DSH_RELIABILITY_SEED"
REPO = Path(__file__).resolve().parents[2]
FIGURES_PATH = REPO / "test-output" / "reliability" / "figures.json"


class Figures:
    """Counters by section (`crash`, `storage_faults`, `fuzz`, …), plus how the run was made."""

    def __init__(self, *, seed: int, long: bool) -> None:
        self._started = time.monotonic()
        self._duration: float | None = None  # fixed when gathered from workers
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
        elapsed = time.monotonic() - self._started if self._duration is None else self._duration
        run = {**self.run, "duration_seconds": round(elapsed, 1)}
        return {"run": run, **{name: self.sections[name] for name in sorted(self.sections)}}

    @classmethod
    def gathered(cls, parts: list[dict[str, Any]]) -> Figures:
        """The figures of a run made by several pytest-xdist workers (`as_json` of each).

        Counters of a section that more than one worker added to are summed
        (nested mappings key by key); the run's duration is the longest worker's.
        """
        run = parts[0]["run"] if parts else {"seed": 0, "long": False}
        gathered = cls(seed=run["seed"], long=run["long"])
        durations = (part["run"].get("duration_seconds", 0) for part in parts)
        gathered._duration = max(durations, default=0)
        for part in parts:
            for name, values in part.items():
                if name != "run":
                    _add(gathered.section(name), values)
        return gathered

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


def _add(into: dict[str, Any], values: Mapping[str, Any]) -> None:
    for key, value in values.items():
        held = into.get(key)
        if isinstance(value, Mapping):
            _add(into.setdefault(key, {}), value)
        elif isinstance(value, int | float) and isinstance(held, int | float):
            into[key] = held + value
        else:
            into[key] = value
