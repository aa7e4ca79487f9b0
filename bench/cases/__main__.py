"""Run one case in this process: `python -m bench.cases NAME --profile P --data-dir D --out F`."""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
from pathlib import Path

import anyio

from ..sizes import PROFILES
from . import resolve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("name", help="a case name (see bench.cases.CASES) or burst-N")
    parser.add_argument("--profile", choices=sorted(PROFILES), default="full")
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    module, function, kwargs = resolve(args.name)
    run = getattr(importlib.import_module(f"bench.cases.{module}"), function)
    size = PROFILES[args.profile]
    args.data_dir.mkdir(parents=True, exist_ok=True)
    if inspect.iscoroutinefunction(run):
        result = anyio.run(lambda: run(size, args.data_dir, **kwargs))
    else:
        result = run(size, args.data_dir, **kwargs)
    args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
