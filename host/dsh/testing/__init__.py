"""Test support shipped with the host, for plugin authors and dsh's own tests.

- `plugin_host(PluginClass | "entry-point", config=...)`: the one-stop test
  Host for a plugin author — the plugin loaded under its entry-point name, an
  in-process HTTP client (`test.client()`, httpx on the ASGI app) and
  WebSocket (`test.websocket(path)`), strict mode on (a tool or hook that
  raises fails the test with its traceback: `Strict`, `StrictModeError`).
- `run_cli(*argv, plugins=[...])` / `await arun_cli(...)`: `dsh` and a
  plugin's commands in-process, returning a `CliResult(code, out, err)`.
- `running_host()`: a real `Host` on in-memory storage with a fake clock and
  a fake model; `load_plugin(host, PluginClass | "entry-point", config=...)`
  loads a plugin into it and returns the instance and its unload disposer;
  `settled(agent)` waits until an agent has nothing left to do.
- The pytest plugin (module `_dsh_pytest`, registered through the `pytest11`
  entry point, so installing dsh is enough): async tests run on anyio with
  no conftest, and a `dsh_strict` fixture.
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
from .cli import CliResult, arun_cli, run_cli
from .clock import FakeClock
from .faults import Fault, FaultyBackend, Hold, InjectedFault, Operation
from .host import Unload, load_plugin, running_host, settled
from .model import FakeModel, Reply
from .plugin import PluginTest, plugin_host
from .strict import Strict, StrictModeError
from .web import TEST_TOKEN, WebSocketClosed, WebSocketSession, web_app, web_client

__all__ = [
    "TEST_TOKEN",
    "CliResult",
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
    "PluginTest",
    "Reply",
    "Strict",
    "StrictModeError",
    "Unload",
    "WebSocketClosed",
    "WebSocketSession",
    "arun_cli",
    "load_plugin",
    "plugin_host",
    "run_cli",
    "running_host",
    "settled",
    "web_app",
    "web_client",
]

#: Names renamed by the third edition: still importable, with a DeprecationWarning.
__getattr__ = renamed_module_names(
    "dsh.testing", {"MemoryWakeStore": ("MemoryWakeBackend", MemoryWakeBackend)}
)
