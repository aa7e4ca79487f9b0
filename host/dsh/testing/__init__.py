"""Test support shipped with the host, for plugin authors and dsh's own tests.

- `running_host()`: a real `Host` on in-memory storage with a fake clock and
  a fake model; `load_plugin(host, PluginClass | "entry-point", config=...)`
  loads a plugin into it and returns the instance and its unload disposer;
  `settled(agent)` waits until an agent has nothing left to do.
- `FakeModel`: a scripted model adapter that records every request.
- `FakeClock`: wall and elapsed time that move only when a test says so.
- `FaultyBackend`: storage that fails or pauses scripted calls.
- `MemoryWakeBackend`: a wake index kept in memory, for
  `running_host(wake_backend=MemoryWakeBackend(), idle_seconds=...)`, where a
  plugin's `dsh_session_wake_at` wakes cold Sessions on the fake clock.

Nothing here runs in production. Like `dsh` itself, import it as a package
(`from dsh.testing import ...`), not its modules.
"""

from ..base.deprecation import renamed_module_names
from ..host.host import Host
from ..persistence.memory import MemoryBackend
from ..wake import MemoryWakeBackend
from .clock import FakeClock
from .faults import Fault, FaultyBackend, Hold, InjectedFault, Operation
from .host import Unload, load_plugin, running_host, settled
from .model import FakeModel, Reply

__all__ = [
    "FakeClock",
    "FakeModel",
    "Fault",
    "FaultyBackend",
    "Hold",
    "Host",
    "InjectedFault",
    "MemoryBackend",
    "MemoryWakeBackend",
    "Operation",
    "Reply",
    "Unload",
    "load_plugin",
    "running_host",
    "settled",
]

#: Names renamed by the third edition: still importable, with a DeprecationWarning.
__getattr__ = renamed_module_names(
    "dsh.testing", {"MemoryWakeStore": ("MemoryWakeBackend", MemoryWakeBackend)}
)
