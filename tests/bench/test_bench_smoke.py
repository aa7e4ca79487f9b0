"""The benchmark suite runs end to end and reports well-formed JSON (not fast numbers).

`python -m bench --smoke` runs every case at tiny sizes, each in its own
subprocess, exactly as the full suite does. This test checks only that the
command exits 0 and that its JSON has the documented shape: the figures
themselves are measured, never asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bench.cases import case_names
from bench.sizes import PROFILES

REPO = Path(__file__).resolve().parents[2]
SUMMARY_KEYS = {"n", "min", "median", "p99", "max"}

pytestmark = pytest.mark.process


def _run_smoke(tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    out = tmp_path / "bench.json"
    completed = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke", "--json", str(out), "--data-dir", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    report: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    return completed, report


def _summaries(value: object) -> list[dict[str, Any]]:
    """Every dict below `value` that looks like a `bench.stats.summary`."""
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        if "median" in value:
            found.append(value)
        for item in value.values():
            found.extend(_summaries(item))
    return found


def test_the_smoke_suite_exits_zero_and_reports_every_case_as_well_formed_json(
    tmp_path: Path,
) -> None:
    completed, report = _run_smoke(tmp_path)

    assert completed.returncode == 0, completed.stderr[-3000:]
    assert report["schema"] == 1
    assert report["profile"] == "smoke"
    machine = report["machine"]
    for key in ("cpu", "cores", "python", "kernel", "filesystem", "disk"):
        assert machine[key], key
    expected = case_names(PROFILES["smoke"].burst)
    assert list(report["cases"]) == expected
    for name, result in report["cases"].items():
        assert "error" not in result, (name, result)
    for summary in _summaries(report["cases"]):
        assert set(summary) >= SUMMARY_KEYS, summary
    rows = report["table"]
    assert rows, "the table is empty"
    for row in rows:
        assert set(row) == {"case", "figure", "measured", "limit", "ratio", "target", "verdict"}
        assert row["verdict"] in {"ok", "MISS", "n/a"}
    # The printed table is the Markdown one the README carries.
    assert "| case | figure | measured |" in completed.stdout
    # Durability reports, beside raw, the ceiling any store keeping dsh's rules has.
    durability = report["cases"]["durability"]
    for batch in ("batch_1", "batch_100"):
        figures = durability[batch]
        for key in ("off_loop_events_per_s", "checked_events_per_s", "ceiling_events_per_s"):
            assert set(figures[key]) >= SUMMARY_KEYS, (batch, key)
        assert figures["ceiling_ratio_to_raw"] > 0, batch
    copies = [row for row in rows if row["case"] == "store copy"]
    assert len(copies) == 3, copies
    ceilings = [row for row in rows if row["figure"].startswith("ceiling: each event checked")]
    assert len(ceilings) == 2, ceilings
    # The storm (issue 36): cold and hot, each against N × fsync of its own run, every
    # reminder dispatched once; the peer fired the same jobs at one instant.
    for name in ("storm", "storm-hot"):
        storm = report["cases"][name]
        assert storm["sessions"] == PROFILES["smoke"].storm, name
        assert (storm["missing"], storm["stored_missing"], storm["duplicated"]) == (0, 0, 0)
        assert storm["fsync_files_ms"]["n"] == storm["sessions"], name
        assert storm["durable_p99_to_bound"] > 0, name
        assert storm["peak_descriptors"] > 0, name
    assert report["cases"]["storm"]["woken"] == PROFILES["smoke"].storm
    for name in ("storm-peer", "storm-peer-memory"):
        assert report["cases"][name]["window_s"] == 0.0, name
    storms = [row for row in rows if row["case"].startswith("10b storm")]
    assert len(storms) == 2, storms
