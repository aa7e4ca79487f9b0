"""`python -m bench`: run the suite, print the table, write the JSON.

    python -m bench [--quick | --smoke] [--json PATH] [--only NAME ...] [--data-dir DIR]
    python -m bench --render PATH        # the table of a saved result

Every case runs in a fresh subprocess (`python -m bench.cases NAME`) with its
own empty data directory under `--data-dir` (default: a temporary directory
in `$TMPDIR`; point it at the filesystem you care about — on tmpfs fsync is
free and the durability figures mean nothing). A case that fails or times
out is reported as an error and makes the command exit 1; the others still
run. Figures are measured, never asserted: the table marks each against its
target, and nothing here fails because a number is slow.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .cases import case_names
from .machine import describe
from .report import render, table_rows

__all__ = ["main"]

REPO = Path(__file__).resolve().parents[1]
TIMEOUTS = {"full": 900.0, "quick": 120.0, "smoke": 90.0}


def _load() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()]


def run_case(name: str, profile: str, data_dir: Path, timeout: float) -> dict[str, Any]:
    """Run one case in a subprocess; its result, or `{"error": ...}`."""
    out = data_dir / f"{name}.json"
    case_dir = data_dir / name
    command = [
        sys.executable,
        "-m",
        "bench.cases",
        name,
        "--profile",
        profile,
        "--data-dir",
        str(case_dir),
        "--out",
        str(out),
    ]
    started = time.perf_counter()
    # Its own process group: a case that times out is stopped with everything it
    # started (a `dsh web`, fan-out clients), not just the case process.
    process = subprocess.Popen(
        command,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return {"error": f"timed out after {timeout:.0f} s"}
    except BaseException:  # Ctrl-C reaches only this process now: take the case down too
        os.killpg(process.pid, signal.SIGKILL)
        raise
    finally:
        shutil.rmtree(case_dir, ignore_errors=True)
    seconds = round(time.perf_counter() - started, 1)
    if process.returncode != 0 or not out.exists():
        tail = (stderr or stdout).strip().splitlines()[-12:]
        return {"error": f"exit {process.returncode}", "output": tail, "case_seconds": seconds}
    result: dict[str, Any] = json.loads(out.read_text())
    result["case_seconds"] = seconds
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="smaller N, fewer rounds (< 2 min)")
    size.add_argument("--smoke", action="store_true", help="tiny sizes: checks the suite runs")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the results here")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these cases")
    parser.add_argument(
        "--render", type=Path, metavar="JSON", help="print the table of a saved result and exit"
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        metavar="DIR",
        help="where cases write (default: a temporary directory)",
    )
    args = parser.parse_args(argv)
    if args.render is not None:
        saved = json.loads(args.render.read_text())
        saved["table"] = table_rows(saved["cases"])
        print(render(saved))
        return
    profile = "smoke" if args.smoke else "quick" if args.quick else "full"

    from .sizes import PROFILES

    names = case_names(PROFILES[profile].burst)
    if args.only:
        unknown = [name for name in args.only if name not in names]
        if unknown:
            parser.error(f"unknown case(s) {unknown}; this profile has {names}")
        names = [name for name in names if name in args.only]
    root = Path(tempfile.mkdtemp(prefix="dsh-bench-", dir=args.data_dir))
    started = dt.datetime.now(dt.UTC)
    clock = time.perf_counter()
    machine = describe(root)
    machine["load_before"] = _load()
    cases: dict[str, Any] = {}
    try:
        for name in names:
            print(f"[bench] {name} ...", file=sys.stderr, flush=True)
            cases[name] = run_case(name, profile, root, TIMEOUTS[profile])
            if "error" in cases[name]:
                print(f"[bench] {name} failed: {cases[name]}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    machine["load_after"] = _load()
    report = {
        "schema": 1,
        "profile": profile,
        "started": started.isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - clock, 1),
        "machine": machine,
        "cases": cases,
        "table": table_rows(cases),
    }
    print(render(report))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    if any("error" in result for result in cases.values()):
        sys.exit(1)
