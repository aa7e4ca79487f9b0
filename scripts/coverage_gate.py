"""Coverage gates: every file of a plugin package at 100% lines and branches,
the host package at 95% or more in total. Prints the report and exits non-zero
on a miss, naming the files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PLUGIN_PREFIX = "plugins/"
HOST_PREFIX = "host/dsh/"
HOST_MINIMUM = 95.0


def main() -> int:
    subprocess.run([sys.executable, "-m", "coverage", "report"], check=False)
    out = Path(".coverage-gate.json")
    subprocess.run([sys.executable, "-m", "coverage", "json", "-q", "-o", str(out)], check=True)
    files = json.loads(out.read_text())["files"]
    out.unlink()
    failures: list[str] = []
    host_hit = host_total = 0
    for name, data in sorted(files.items()):
        summary = data["summary"]
        covered = summary["covered_lines"] + summary.get("covered_branches", 0)
        total = summary["num_statements"] + summary.get("num_branches", 0)
        if name.startswith(PLUGIN_PREFIX) and covered < total:
            failures.append(f"{name}: {covered}/{total} lines+branches (plugins need 100%)")
        if name.startswith(HOST_PREFIX):
            host_hit += covered
            host_total += total
    if host_total:
        percent = 100.0 * host_hit / host_total
        print(f"host core coverage: {percent:.2f}% (gate {HOST_MINIMUM}%)")
        if percent < HOST_MINIMUM:
            failures.append(f"host/dsh: {percent:.2f}% < {HOST_MINIMUM}%")
    for failure in failures:
        print(f"coverage gate: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
