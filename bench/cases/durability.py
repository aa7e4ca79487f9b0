"""Durability cost: append + flush throughput of one Session beside raw write + fdatasync.

The workloads are `bench/persistence_throughput.py`'s (the persistence
helper's standalone script, which this case drives rather than duplicates):

- `raw`: the same JSON lines written to a file in the same directory with one
  `write` + fdatasync per batch and no Python objects in between (the limit);
- `dsh`: `LiveSessions.append` x batch, then `await store.flush()`, through the
  real `PersistenceCoordinator` and `JsonlBackend` (its file work in its I/O
  worker thread, never on the event loop), under the collection policy
  `dsh web` runs with (`HeapPolicy`, as the bench's hosts);
- `backend`: `JsonlBackend.append` alone with events built beforehand;
- `off_loop` and `checked`: the raw loop with each write + fdatasync handed to
  a worker thread, and the events built with nothing else; `ceiling` is the
  two in sequence, the most any store could reach here that checks every
  event and never touches the disk on the event loop (DESIGN §4), which dsh
  does by rule. Its ratio to `raw` is the best ratio such a store could report.

Cases are interleaved round by round (fsync latency drifts on shared disks)
and each figure is the min/median/max over rounds, in events per second.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from .. import persistence_throughput as workloads
from ..sizes import Size
from ..stats import summary

__all__ = ["durability"]


def durability(size: Size, data_dir: Path) -> dict[str, Any]:
    directory = data_dir / "durability"
    directory.mkdir(parents=True, exist_ok=True)
    batches = {1: size.durability_events[0], 100: size.durability_events[1]}
    rates: dict[tuple[str, int], list[float]] = {}
    for _ in range(size.durability_rounds):
        for batch, events in batches.items():
            rates.setdefault(("raw", batch), []).append(workloads.raw(directory, batch, events))
            for key, rate in workloads.ceiling(directory, batch, events).items():
                rates.setdefault((key, batch), []).append(rate)
            rates.setdefault(("backend", batch), []).append(
                anyio.run(workloads.backend_only, directory, batch, events)
            )
            rates.setdefault(("dsh", batch), []).append(
                anyio.run(workloads.stack, directory, batch, events, 1)
            )
    result: dict[str, Any] = {"rounds": size.durability_rounds, "line_bytes": len(workloads.line())}
    for batch, events in batches.items():
        raw = summary(rates[("raw", batch)], 0)
        dsh = summary(rates[("dsh", batch)], 0)
        ceiling = summary(rates[("ceiling", batch)], 0)
        result[f"batch_{batch}"] = {
            "events_per_round": events,
            "raw_events_per_s": raw,
            "off_loop_events_per_s": summary(rates[("off_loop", batch)], 0),
            "checked_events_per_s": summary(rates[("checked", batch)], 0),
            "ceiling_events_per_s": ceiling,
            "backend_events_per_s": summary(rates[("backend", batch)], 0),
            "dsh_events_per_s": dsh,
            "ratio_to_raw": _ratio(dsh, raw),
            "ceiling_ratio_to_raw": _ratio(ceiling, raw),
            "ratio_to_ceiling": _ratio(dsh, ceiling),
        }
    return result


def _ratio(part: dict[str, Any], whole: dict[str, Any]) -> float:
    return round(float(part["median"] or 0) / float(whole["median"] or 1), 3)
