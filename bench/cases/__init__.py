"""The benchmark cases. Each runs alone in a fresh process:

    python -m bench.cases NAME --profile full|quick|smoke --data-dir DIR --out FILE

and writes its result as one JSON object to FILE. `CASES` maps each name to
`(module, function, keyword arguments)`; a function takes `(size, data_dir)`
and may be a coroutine function (run under anyio on asyncio). `burst-N` runs
the burst case with N Sessions.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CASES", "case_names", "resolve"]

CASES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "idle": ("punctuality", "idle", {}),
    "spread": ("punctuality", "spread", {}),
    "spread-peer": ("peer", "spread_peer", {}),
    "spread-peer-memory": ("peer", "spread_peer_memory", {}),
    "spread-recurring": ("recurring", "spread_recurring", {}),
    "catchup": ("catchup", "catchup", {}),
    "fold": ("fold", "fold_cost", {}),
    "durability": ("durability", "durability", {}),
    "resume": ("resume", "resume", {}),
    "history": ("web", "history", {}),
    "fanout": ("fanout", "fanout", {}),
    "memory": ("footprint", "memory", {}),
    "idle-cpu": ("footprint", "idle_cpu", {}),
    "coldstart": ("web", "coldstart", {}),
    "pg": ("postgres", "pg", {}),
    "wake": ("wake", "wake", {}),
    "hibernate": ("wake", "hibernate", {}),
    "storm": ("storm", "storm", {}),
    "storm-hot": ("storm", "storm_hot", {}),
    "storm-pg": ("storm_pg", "storm_pg", {}),
    "storm-peer": ("peer", "storm_peer", {}),
    "storm-peer-memory": ("peer", "storm_peer_memory", {}),
    "hostile": ("hostile", "hostile", {}),
    "codec": ("codec", "codec", {}),
    "alerts": ("alerts", "alerts", {}),
    "notify": ("notify", "notify", {}),
    "store-copy": ("transfer", "store_copy", {}),
    "search": ("search", "search", {}),
    "demo": ("demo", "demo", {}),
}


def resolve(name: str) -> tuple[str, str, dict[str, Any]]:
    """The `(module, function, kwargs)` of case `name`; raises `KeyError`."""
    if name.startswith("burst-") and name.removeprefix("burst-").isdigit():
        return "punctuality", "burst", {"sessions": int(name.removeprefix("burst-"))}
    return CASES[name]


def case_names(burst: tuple[int, ...]) -> list[str]:
    """Every case of a profile whose burst sizes are `burst`, in report order."""
    names = list(CASES)
    return [names[0], *(f"burst-{count}" for count in burst), *names[1:]]
