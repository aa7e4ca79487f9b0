"""What the numbers were measured on: CPU, cores, Python, kernel, and the data dir's disk."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path
from typing import Any

__all__ = ["describe"]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _mount_of(path: Path) -> dict[str, str]:
    """The mount holding `path` (longest matching mount point in /proc/mounts)."""
    best = {"device": "?", "mount": "?", "fstype": "?", "options": ""}
    resolved = str(path.resolve())
    length = -1
    try:
        lines = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return best
    for line in lines:
        parts = line.split()
        if len(parts) < 4:
            continue
        device, mount, fstype, options = parts[:4]
        inside = resolved == mount or resolved.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) > length:
            length = len(mount)
            best = {"device": device, "mount": mount, "fstype": fstype, "options": options}
    return best


def _rotational(device: str) -> str:
    name = Path(device).name
    for candidate in (name, name.rstrip("0123456789"), name.rstrip("0123456789").rstrip("p")):
        flag = Path("/sys/block") / candidate / "queue" / "rotational"
        if flag.exists():
            # Virtual disks often claim to be rotational: report the flag, not a guess.
            return f"{candidate}, rotational={flag.read_text().strip()}"
    return f"{name}, rotational=unknown"


def describe(data_dir: Path) -> dict[str, Any]:
    """A JSON-ready description of this machine and of the filesystem of `data_dir`."""
    mount = _mount_of(data_dir)
    try:
        memory_kib = int(
            next(
                line.split()[1]
                for line in Path("/proc/meminfo").read_text().splitlines()
                if line.startswith("MemTotal")
            )
        )
    except (OSError, StopIteration, ValueError):
        memory_kib = 0
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": round(memory_kib / 1024 / 1024, 1),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "python_executable": sys.executable,
        "kernel": f"{platform.system()} {platform.release()}",
        "data_dir": str(data_dir),
        "filesystem": f"{mount['fstype']} on {mount['device']} ({mount['mount']})",
        "disk": _rotational(mount["device"]),
    }
