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
  which answers the time in the person's zone (`ToolContext.time_zone`), one
  command, `dsh --overlay PATH <name> [ZONE]`, which prints it, a Session
  state (the tool's last answer) and the panel's `ClientModule`;
- `src/<package>/static/panel.js`: the panel, a browser ES module (package
  data) whose `register(registry)` shows that state above the conversation,
  as text only; the host serves it at `/plugins/<name>/panel.js`;
- `tests/test_plugin.py`: tests of the tool, the command, the state and the
  panel's serving through `dsh.testing` (`plugin_host`, `run_cli`, the web
  client) that pass as generated;
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
        description="Write a new plugin distribution (pyproject, a plugin class with a tool, "
        "a command and a browser panel, passing tests, a README) ready for pip install -e.",
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
        Path("src", package, "static", "panel.js"): _PANEL,
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
# The whole package folder, so static/panel.js ships in the wheel as package data.
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

The tool `$tool` tells the model; the command
`dsh --overlay PATH $name [ZONE]` prints it;
the panel (`static/panel.js`) shows the tool's last answer above the
conversation in the browser.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dsh import (
    Agent,
    ClientModule,
    Clock,
    CommandContext,
    JsonLike,
    PluginContext,
    RegisterCommand,
    SessionLog,
    Tool,
    ToolArguments,
    ToolContext,
    hookimpl,
)

COMMAND = "$name"
PANEL = Path(__file__).parent / "static" / "panel.js"
"""The panel's browser module (package data), served at /plugins/<plugin>/panel.js."""


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
    """Loaded once per Host: installs the tool in every agent, offers the command,
    keeps a state of each Session and ships the panel that shows it."""

    def __init__(self, context: PluginContext[None]) -> None:
        self.context = context

    @hookimpl
    def dsh_agent_published(self, agent: Agent) -> None:
        scope = self.context.install(agent)  # closes with the agent or the plugin
        scope.add(agent.tools.register(NowTool()))

    @hookimpl
    def dsh_session_state(self, session: SessionLog) -> JsonLike:
        """The tool's last answer in `session`, or None before its first.

        The panel reads it as `props.states["$name"]`; the host sends it
        again after each flush that changed it.
        """
        for event in session.scan(types={"tool/result"}, reverse=True):
            data = event.data  # decoded afresh on each access: read it once
            if not isinstance(data, dict) or data.get("name") != NowTool.name:
                continue
            if isinstance(answer := data.get("value"), dict):
                return {"lastAnswer": answer}
        return None

    @hookimpl
    def dsh_client_modules(self) -> list[ClientModule]:
        """The panel: the browser imports it and calls its `register(registry)`."""
        return [ClientModule(path=PANEL)]

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
PANEL_URL = f"/plugins/{PLUGIN}/panel.js"  # where the host serves the panel's module


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


async def test_the_state_the_panel_shows_is_the_tools_last_answer() -> None:
    model = FakeModel(
        [
            FakeModel.tool_call("$tool", id="call-1"),
            "done",
            FakeModel.tool_call("$tool", id="call-2"),
            "done",
        ]
    )
    clock = FakeClock(wall_ms=1_767_225_600_000)  # 2026-01-01T00:00:00Z
    async with plugin_host(PLUGIN, model=model, clock=clock) as test, test.client() as client:
        agent = await test.host.create_session()
        url = f"/api/sessions/{agent.session.id}"  # what the page reads when it opens one
        before = (await client.get(url)).json()["plugins"]

        for zone in ("Asia/Tokyo", "Europe/Paris"):
            agent.submit("what time is it?", time_zone=zone)
            await settled(agent)
        after = (await client.get(url)).json()["plugins"]

    assert PLUGIN not in before  # no answer yet: the panel says so
    assert after[PLUGIN] == {
        "lastAnswer": {"timeZone": "Europe/Paris", "local": "2026-01-01T01:00:00+01:00"}
    }


async def test_the_panel_is_served_to_the_browser() -> None:
    async with plugin_host(PLUGIN) as test, test.client() as client:
        listed = (await client.get("/api/client-modules")).json()["modules"]
        module = await client.get(PANEL_URL)

    assert listed == [{"plugin": PLUGIN, "url": PANEL_URL, "eventTypes": []}]
    assert module.status_code == 200
    assert module.headers["content-type"].startswith("text/javascript")
    assert "export function register(registry)" in module.text
'''

# A JavaScript template: `$$` is a literal dollar sign (string.Template), so
# the module builds its strings without template literals.
_PANEL = """\
// The $name panel: the last answer of the tool `$tool`, above the conversation.
//
// The plugin's `dsh_client_modules()` ships this file; the host serves it at
// /plugins/$name/panel.js (listed by GET /api/client-modules); the page
// imports it and calls `register(registry)`. The panel is mounted when a
// conversation is opened, and `update(props)` is called whenever that
// conversation's plugin states (`props.states["$name"]`: what the plugin's
// `dsh_session_state` returned, sent again after every change), the language
// (`props.lang`: "en" or "zh") or the clock change. Everything it shows is set
// as text (`textContent`), never parsed as HTML.

export const PLUGIN = "$name";

/** Every person-facing string of the panel, by language. */
export const WORDS = Object.freeze({
  en: Object.freeze({ title: "Time", empty: "No answer yet: ask what time it is." }),
  zh: Object.freeze({ title: "时间", empty: "还没有回答：问一下现在几点。" }),
});

/** Called once by the page with the plugin's registry. */
export function register(registry) {
  registry.registerPanel(PLUGIN, { order: 50, mount });
}

/** Build the panel in `host.document`; returns `{element, update(props)}`. */
function mount(host) {
  const document = host.document;
  const element = document.createElement("section");
  element.className = "panel";
  const head = document.createElement("div");
  head.className = "panel-head";
  const title = document.createElement("strong");
  const answer = document.createElement("span");
  answer.setAttribute("data-role", "last-answer");
  answer.setAttribute("dir", "auto"); // its own direction, whatever the text holds
  head.append(title, " ", answer);
  element.appendChild(head);

  function update(props) {
    const words = WORDS[props.lang] ?? WORDS.en;
    const last = props.states?.[PLUGIN]?.lastAnswer;
    title.textContent = words.title;
    answer.textContent = last ? last.local + " (" + last.timeZone + ")" : words.empty;
  }

  update({ lang: "en", states: {} });
  return { element, update };
}
"""

_README = """\
# $distribution

A dsh plugin: the tool `$tool` tells the model the
time where the person is, `dsh --overlay PATH $name [ZONE]` prints it, and a
panel above the conversation in `dsh web` shows the tool's last answer.

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

`src/$package/static/panel.js` is the panel, a browser ES module shipped as
package data: `dsh_client_modules()` hands it to the host, which serves it at
`/plugins/$name/panel.js`; the page imports it and calls its
`register(registry)`. It shows `dsh_session_state` (the tool's last answer) —
open a conversation in `dsh web` and it is above the messages. It builds its
elements with `createElement` and sets text with `textContent` only, never
HTML.
"""
