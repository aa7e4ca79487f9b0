"""`dsh plugin new NAME [--directory DIR]`: a new plugin distribution, ready for `pip install -e`.

NAME is the plugin's entry-point name (what an overlay's `[plugins.NAME]`
says) and its command's: lowercase letters, digits and `-`, starting with a
letter, at most 32, not a built-in command's name. The
distribution is `dsh-NAME` in `./dsh-NAME` (or DIR), its package
`dsh_<name>`; it holds:

- `pyproject.toml`: the `dsh.plugins` entry point, the `dsh-host`
  requirement, a `test` extra (`dsh-host[test]`: pytest and mypy), ruff and
  strict mypy settings;
- `src/<package>/plugin.py`: the plugin class with one tool, `<name>_now`,
  which answers the time in the person's zone (`ToolContext.time_zone`), and
  one command, `dsh --overlay PATH <name> [ZONE]`, which prints it;
- `tests/test_plugin.py`: tests of both through `dsh.testing` (`plugin_host`,
  `run_cli`) that pass as generated;
- `README.md`: how to install, test and enable it.

An existing DIR is refused (nothing is overwritten). Prints the files it
wrote, then the next commands on stderr.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from string import Template

from .app import EXIT_OK, Command, Streams
from .errors import CommandError

__all__ = ["COMMAND", "scaffold"]

_NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")
# The built-in commands, which a plugin's command cannot shadow. Spelled out
# rather than read from `dsh.cli.COMMANDS`, which imports this module; a test
# keeps the two equal.
BUILTIN_COMMANDS = frozenset({"web", "plugins", "plugin", "sessions", "store", "index"})


def _configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(title="actions", dest="action", metavar="ACTION", required=True)
    new = actions.add_parser(
        "new",
        help="scaffold a new plugin distribution",
        description="Write a new plugin distribution (pyproject, a plugin class with one tool, "
        "a passing test, a README) ready for pip install -e.",
    )
    new.add_argument("name", metavar="NAME", help="the plugin's entry-point name, e.g. tool-clock")
    new.add_argument(
        "--directory", metavar="DIR", type=Path, help="where to write it (default: ./dsh-NAME)"
    )
    new.set_defaults(run=_new)


COMMAND = Command(name="plugin", help="write a new plugin", configure=_configure)


def _new(args: argparse.Namespace, streams: Streams) -> int:
    directory: Path = args.directory or Path(f"dsh-{args.name}")
    written = scaffold(args.name, directory)
    for path in written:
        streams.line(str(path))
    streams.note(
        f"next: cd {directory} && pip install -e '.[test]' && pytest && mypy src tests; "
        f"then enable it with [plugins.{args.name}] in an overlay"
    )
    return EXIT_OK


def scaffold(name: str, directory: Path) -> list[Path]:
    """Write the distribution for plugin `name` into `directory`; returns the files written.

    Raises `CommandError` for a name that is not a plugin name or a
    directory that exists already.
    """
    if _NAME.fullmatch(name) is None or len(name) > 32:
        raise CommandError(
            f"{name!r} is not a plugin name: use lowercase letters, digits and '-', starting "
            "with a letter, at most 32 (e.g. tool-clock)"
        )
    if name in BUILTIN_COMMANDS:
        raise CommandError(f"{name!r} is a dsh command already; choose another name")
    if directory.exists():
        raise CommandError(f"{directory} exists already; choose another with --directory DIR")
    package = "dsh_" + name.replace("-", "_")
    words = {
        "name": name,
        "package": package,
        "distribution": f"dsh-{name}",
        "cls": "".join(part.capitalize() for part in name.split("-")) + "Plugin",
        "tool": name.replace("-", "_") + "_now",
    }
    files = {
        Path("pyproject.toml"): _PYPROJECT,
        Path("README.md"): _README,
        Path("src", package, "__init__.py"): '"""The $distribution plugin for dsh."""\n',
        Path("src", package, "py.typed"): "",
        Path("src", package, "plugin.py"): _PLUGIN,
        Path("tests", "test_plugin.py"): _TEST,
    }
    written = []
    for relative, template in files.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Template(template).substitute(words), encoding="utf-8")
        written.append(path)
    return written


_PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.21"]
build-backend = "hatchling.build"

[project]
name = "$distribution"
version = "0.1.0"
description = "A dsh plugin"
requires-python = ">=3.11"
dependencies = ["dsh-host"]

[project.optional-dependencies]
test = ["dsh-host[test]", "ruff>=0.5"]

[project.entry-points."dsh.plugins"]
$name = "$package.plugin:$cls"

[tool.hatch.build.targets.wheel]
packages = ["src/$package"]

[tool.pytest.ini_options]
testpaths = ["tests"]
filterwarnings = ["error"]

[tool.mypy]
strict = true
plugins = ["pydantic.mypy"]

[tool.ruff]
line-length = 100
target-version = "py311"

[tool.ruff.lint]
select = ["E", "F", "W", "I", "B", "UP", "ASYNC", "SIM", "RUF"]
"""

_PLUGIN = '''\
"""The $name plugin: the time where the person is.

The tool `$tool` tells the model;
the command `dsh --overlay PATH $name [ZONE]` prints it.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dsh import (
    Agent,
    Clock,
    CommandContext,
    JsonLike,
    PluginContext,
    RegisterCommand,
    Tool,
    ToolArguments,
    ToolContext,
    hookimpl,
)

COMMAND = "$name"


def local_time(clock: Clock, zone: str) -> str:
    """The clock's time in IANA `zone`, ISO 8601 (`ZoneInfoNotFoundError`: no such zone)."""
    now = datetime.fromtimestamp(clock.wall_ms() / 1000, UTC)
    return now.astimezone(ZoneInfo(zone)).isoformat()


class NowArguments(ToolArguments):
    """No arguments: the zone is the one the person's message came from."""


class NowTool(Tool[NowArguments]):
    name = "$tool"
    description = "The current date and time where the person is."
    arguments = NowArguments

    async def run(self, args: NowArguments, ctx: ToolContext) -> JsonLike:
        zone = ctx.time_zone or "UTC"  # None: the message that started the turn named none
        return {"timeZone": zone, "local": local_time(ctx.clock, zone)}


class $cls:
    """Loaded once per Host: installs the tool in every agent and offers the command."""

    def __init__(self, context: PluginContext[None]) -> None:
        self.context = context

    @hookimpl
    def dsh_agent_published(self, agent: Agent) -> None:
        scope = self.context.install(agent)  # closes with the agent or the plugin
        scope.add(agent.tools.register(NowTool()))

    @hookimpl
    def dsh_cli_commands(self, register: RegisterCommand) -> None:
        register(COMMAND, self.now, help="print the time in a zone", configure=self.options)

    def options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("zone", nargs="?", default="UTC", help="an IANA zone (Asia/Tokyo)")

    def now(self, args: argparse.Namespace, context: CommandContext) -> int:
        try:
            context.line(local_time(self.context.clock, args.zone))
        except (ZoneInfoNotFoundError, ValueError):
            context.note(f"no time zone {args.zone!r}; try one like Europe/Paris")
            return 2
        return 0
'''

_TEST = '''\
"""The $name plugin in a real test Host.

`dsh.testing`'s pytest plugin runs the async tests: no conftest needed.
"""

from __future__ import annotations

from dsh.testing import FakeClock, FakeModel, plugin_host, run_cli, settled

PLUGIN = "$name"  # the entry-point name, as an overlay names it


async def test_the_tool_answers_the_time_in_the_persons_zone() -> None:
    model = FakeModel([FakeModel.tool_call("$tool"), "done"])
    clock = FakeClock(wall_ms=1_767_225_600_000)  # 2026-01-01T00:00:00Z
    async with plugin_host(PLUGIN, model=model, clock=clock) as test:
        agent = await test.host.create_session()

        agent.submit("what time is it?", time_zone="Asia/Tokyo")
        await settled(agent)

    results = [event.data for event in agent.session.scan(types={"tool/result"})]
    assert results == [
        {
            "callId": "call-$tool",
            "name": "$tool",
            "value": {"timeZone": "Asia/Tokyo", "local": "2026-01-01T09:00:00+09:00"},
        }
    ]


def test_the_command_prints_the_time_in_a_zone_and_refuses_an_unknown_one() -> None:
    tokyo = run_cli(PLUGIN, "Asia/Tokyo", plugins=[PLUGIN])
    assert tokyo.code == 0 and tokyo.out.endswith("+09:00\\n")

    nowhere = run_cli(PLUGIN, "Mars/Olympus", plugins=[PLUGIN])
    assert nowhere.code == 2 and "no time zone 'Mars/Olympus'" in nowhere.err
'''

_README = """\
# $distribution

A dsh plugin: the tool `$tool` tells the model the
time where the person is, and `dsh --overlay PATH $name [ZONE]` prints it.

Install it (with dsh) in a virtual environment, run its tests and type-check it:

```
pip install -e '.[test]'
pytest
mypy src tests
ruff check .
```

Enable it in an overlay, check it, and serve it:

```toml
[plugins.$name]
```

```
dsh plugins --overlay path/to/overlay.toml
dsh web --overlay path/to/overlay.toml
```

`src/$package/plugin.py` is the plugin: a class named by the `dsh.plugins`
entry point in `pyproject.toml`, instantiated once per host. Add hooks with
`@dsh.hookimpl`; `tests/test_plugin.py` shows how `dsh.testing` runs it in a
real host with a scripted model.
"""
