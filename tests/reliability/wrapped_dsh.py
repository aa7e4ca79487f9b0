"""Run the real `dsh` command with test instruments fitted at the process level.

    python tests/reliability/wrapped_dsh.py web --data-dir DIR ...

Everything after the script name goes to `dsh` unchanged. Optional
instruments, each switched on by an environment variable:

- `DSH_TEST_CLOCK_FILE`: the wall clock is `time.time()` plus an offset in
  seconds read from this file (a float; a missing or empty file means 0). The
  file is re-read whenever it changes, so a test steps the wall clock of the
  running process backwards or forwards by rewriting it. Only the wall clock
  moves: monotonic time (every sleep and timeout) is untouched, exactly as
  when NTP or a person sets the system clock.
- `DSH_TEST_WALL_LOG`: every read of the host's wall clock
  (`dsh.base.clock.SystemClock.wall_ms`) appends `<real ms> <wall ms>` to this
  file, so a test can see the schedule owner wake and re-read the clock.
- `DSH_TEST_AUDIT_LOG`: a `sys.addaudithook` hook appends
  `<event>\\t<path>` for every file the process opens, lists, creates,
  renames, links or removes, so a test can prove what the server touched.

- `DSH_TEST_FULL_DISK_FLAG` (with `DSH_TEST_FULL_DISK_ROOT`): while the flag
  file exists, every `os.write` to a file under the root fails with ENOSPC: a
  full disk where no real small one can be mounted (`tests/support/fulldisk.py`).
- `DSH_TEST_KILL_AT`: the process SIGKILLs itself at one exact point of the
  first reminder delivery: `after-dispatch-append` (the reminder is queued
  and its dispatch appended, nothing of it durable yet: the at-least-once
  window), `after-dispatch-barrier` (the dispatch is durable, the reminder
  message not yet appended) or `after-requeue` (a resumed owner has queued
  again the follow-up an earlier process lost; it is not stored yet).

Log lines are written with `os.write` on descriptors opened before the hooks
are installed (an `open()` inside an audit hook would audit itself).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

_AUDITED = frozenset(
    {
        "open",
        "os.listdir",
        "os.scandir",
        "os.mkdir",
        "os.remove",
        "os.rmdir",
        "os.rename",
        "os.link",
        "os.symlink",
        "os.truncate",
        "os.chmod",
        "os.chown",
        "shutil.copyfile",
        "shutil.rmtree",
    }
)


def _append_fd(path: str) -> int:
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)


def install_clock(control: str) -> None:
    """Patch `time.time` and `time.time_ns` with the offset kept in `control`."""
    real_time: Callable[[], float] = time.time
    real_time_ns: Callable[[], int] = time.time_ns
    state: dict[str, Any] = {"stamp": None, "offset_ns": 0}

    def offset_ns() -> int:
        try:
            stat = os.stat(control)
        except FileNotFoundError:
            return 0
        stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        if stamp != state["stamp"]:
            with open(control, encoding="utf-8") as handle:
                text = handle.read().strip()
            state["offset_ns"] = round(float(text or "0") * 1_000_000_000)
            state["stamp"] = stamp
        return int(state["offset_ns"])

    def fake_time() -> float:
        return real_time() + offset_ns() / 1_000_000_000

    def fake_time_ns() -> int:
        return real_time_ns() + offset_ns()

    time.time = fake_time
    time.time_ns = fake_time_ns


def install_wall_log(path: str) -> None:
    """Record every read of the host's wall clock as `<real ms> <wall ms>`."""
    from dsh.base.clock import SystemClock

    fd = _append_fd(path)
    read_wall = SystemClock.wall_ms

    def wall_ms(self: SystemClock) -> int:
        wall = read_wall(self)
        # CLOCK_REALTIME straight from the kernel: the real time, even when faked.
        real = time.clock_gettime_ns(time.CLOCK_REALTIME) // 1_000_000
        os.write(fd, f"{real} {wall}\n".encode())
        return wall

    SystemClock.wall_ms = wall_ms  # type: ignore[method-assign]


def install_audit(path: str) -> None:
    """Append `<event>\\t<path>` for every audited file-system event."""
    fd = _append_fd(path)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event not in _AUDITED or not args:
            return
        # A rename or link names two paths; every other event one (or a descriptor).
        targets = args[:2] if event in ("os.rename", "os.link", "os.symlink") else args[:1]
        for target in targets:
            if isinstance(target, int):
                continue  # an already open descriptor (e.g. os.scandir(fd)): no new path
            path = os.fsdecode(target) if isinstance(target, bytes) else str(target)
            if event == "open" and path.startswith("/proc/"):
                continue
            os.write(fd, f"{event}\t{path}\n".encode(errors="backslashreplace"))

    sys.addaudithook(hook)


def install_kill(point: str) -> None:
    """SIGKILL this process at `point` of the first reminder delivery (see above)."""
    import signal

    from dsh_tool_schedule.ledger import ScheduleLedger
    from dsh_tool_schedule.owner import ReminderOwner

    if point not in ("after-dispatch-append", "after-dispatch-barrier", "after-requeue"):
        raise SystemExit(f"wrapped_dsh: unknown DSH_TEST_KILL_AT {point!r}")
    append_dispatch = ScheduleLedger.append_dispatch
    barrier = ScheduleLedger.barrier
    dispatched: list[bool] = []

    def kill() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    def append_then_maybe_die(self: ScheduleLedger, *args: Any) -> Any:
        event = append_dispatch(self, *args)
        dispatched.append(True)
        if point == "after-dispatch-append":
            kill()
        return event

    async def barrier_then_maybe_die(self: ScheduleLedger) -> None:
        await barrier(self)
        if point == "after-dispatch-barrier" and dispatched:
            kill()

    queue_again = ReminderOwner._queue_again

    def queue_again_then_die(self: ReminderOwner, *args: Any) -> None:
        queue_again(self, *args)
        kill()

    if point == "after-requeue":
        ReminderOwner._queue_again = queue_again_then_die  # type: ignore[method-assign]
    ScheduleLedger.append_dispatch = append_then_maybe_die  # type: ignore[method-assign]
    ScheduleLedger.barrier = barrier_then_maybe_die  # type: ignore[method-assign]


def install_full_disk(flag: str, root: str) -> None:
    """`os.write` under `root` fails with ENOSPC while `flag` exists."""
    from pathlib import Path

    from tests.support.fulldisk import simulated_write

    os.write = simulated_write(os.write, Path(flag), Path(root))  # type: ignore[assignment]


def main() -> int:
    full_disk = os.environ.get("DSH_TEST_FULL_DISK_FLAG")
    if full_disk:
        install_full_disk(full_disk, os.environ["DSH_TEST_FULL_DISK_ROOT"])
    clock = os.environ.get("DSH_TEST_CLOCK_FILE")
    if clock:
        install_clock(clock)
    wall_log = os.environ.get("DSH_TEST_WALL_LOG")
    if wall_log:
        install_wall_log(wall_log)
    audit = os.environ.get("DSH_TEST_AUDIT_LOG")
    if audit:
        install_audit(audit)
    kill_at = os.environ.get("DSH_TEST_KILL_AT")
    if kill_at:
        install_kill(kill_at)
    from dsh.cli import main as dsh_main

    return dsh_main(sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
