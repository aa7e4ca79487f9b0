"""docs/DESIGN.md is the design in the repository: every citation of it points into it."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from dsh import Agent, PluginContext, hookimpl
from dsh.plugins import hookspecs
from dsh.testing import CliResult, FakeClock, FakeModel, plugin_host, run_cli, settled
from tests.host.fixtures.distributions import FakeSite

REPO = Path(__file__).resolve().parents[1]
DESIGN = REPO / "docs" / "DESIGN.md"
CITATION = re.compile(r"DESIGN(?:\.md)? ?§ ?(\d+[a-z]?)")
SECTION = re.compile(r"^## (\d+[a-z]?)\. ", re.MULTILINE)


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "*.py", "*.md", "*.js", "*.mjs", "*.toml", "*.html", "*.css"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [REPO / name for name in listed if (REPO / name).is_file()]


def test_every_design_citation_names_a_section_of_docs_design() -> None:
    sections = set(SECTION.findall(DESIGN.read_text(encoding="utf-8")))
    cited: dict[str, set[str]] = {}
    for path in tracked_text_files():
        for number in CITATION.findall(path.read_text(encoding="utf-8", errors="replace")):
            cited.setdefault(number, set()).add(str(path.relative_to(REPO)))
    assert cited, "the tree cites the design"
    missing = {number: sorted(paths) for number, paths in cited.items() if number not in sections}
    assert missing == {}


def test_the_readme_links_the_design_and_it_has_a_glossary_and_the_layers() -> None:
    assert "(docs/DESIGN.md)" in (REPO / "README.md").read_text(encoding="utf-8")
    text = DESIGN.read_text(encoding="utf-8")
    for heading in ("## 1. Architecture", "### 1.1 Layers", "## 15. Glossary", "## 12. Guarantees"):
        assert heading in text


# -- §7.1, the plugin reference: every example runs ---------------------------------

DESIGN_TEXT = DESIGN.read_text(encoding="utf-8")
_EXAMPLE = re.compile(r"<!-- design-example: ([\w-]+) -->\n```\w*\n(.*?)```", re.S)
EXAMPLES = dict(_EXAMPLE.findall(DESIGN_TEXT))
_HOOK_TABLE = re.compile(r"<!-- design-hooks -->\n(.*?)<!-- /design-hooks -->", re.S)
_HOOK_ROW = re.compile(r"^\| `(dsh_\w+)\(([^)]*)\)` \|", re.M)


def example_module(name: str, module: str | None = None) -> types.ModuleType:
    """The design example `name`, executed as module `module`."""
    loaded = types.ModuleType(module or name.replace("-", "_"))
    exec(compile(EXAMPLES[name], f"docs/DESIGN.md ({name})", "exec"), loaded.__dict__)
    return loaded


def test_the_reference_has_every_example() -> None:
    assert set(EXAMPLES) == {"hooks", "tool-context", "clock", "cli", "client"}


def test_the_hook_table_lists_every_hook_with_its_arguments() -> None:
    table = _HOOK_TABLE.search(DESIGN_TEXT)
    assert table is not None
    listed = {name: args.replace(" ", "") for name, args in _HOOK_ROW.findall(table.group(1))}
    specs = {
        name: ",".join(inspect.signature(getattr(hookspecs, name)).parameters)
        for name in dir(hookspecs)
        if name.startswith("dsh_")
    }
    assert listed == specs


@pytest.mark.anyio
async def test_the_hooks_example_answers_state_and_views() -> None:
    pins = example_module("hooks")
    async with plugin_host(pins.Pins) as test:
        agent = await test.host.create_session()
        test.host.live.append(agent.session, pins.PIN, {"text": "milk"})
        await test.host.live.flush(agent.session)
        event = agent.session.events[-1]

        assert await test.host.plugin_states(agent.session.id) == {"Pins": {"pins": 1}}
        assert test.host.contributions.view(agent.session, event) == {"text": "milk"}


class _PinPlugin:
    def __init__(self, context: PluginContext[None]) -> None:
        self.context = context

    @hookimpl
    def dsh_agent_published(self, agent: Agent) -> None:
        pin_tool = example_module("tool-context").PinTool
        self.context.install(agent).add(agent.tools.register(pin_tool()))


@pytest.mark.anyio
async def test_the_tool_context_example_pins_durably_with_time_and_zone() -> None:
    model = FakeModel(
        [FakeModel.tool_call("pin", {"text": "milk"}), FakeModel.tool_call("pin", {"text": " "})]
    )
    model.add("done")
    async with plugin_host(_PinPlugin, model=model, clock=FakeClock(wall_ms=5_000)) as test:
        agent = await test.host.create_session()
        agent.submit("pin milk", time_zone="Europe/Oslo")
        await settled(agent)

    results = [event.data for event in agent.session.scan(types={"tool/result"})]
    assert results[0]["value"] == {"text": "milk", "at": 5_000, "zone": "Europe/Oslo"}
    assert results[1]["error"] == {"code": "empty_note", "message": "a note needs some text"}
    assert [event.data for event in agent.session.scan(types={"note/pin"})] == [
        {"text": "milk", "at": 5_000, "zone": "Europe/Oslo"}
    ]


@pytest.mark.anyio
async def test_the_clock_example_runs() -> None:
    await example_module("clock").example()


def test_the_cli_example_runs_through_dsh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "design_greeter", example_module("cli", "design_greeter"))
    FakeSite(tmp_path / "site", monkeypatch).install(
        "dsh-greeter", {"greeter": "design_greeter:Greeter"}
    )

    assert run_cli("greet", "ada", plugins=["greeter"]) == CliResult(0, "hello ada\n", "")
    assert run_cli("greet", "ada", "--shout", plugins=["greeter"]).out == "HELLO ADA\n"
    assert run_cli("greet", " ", plugins=["greeter"]) == CliResult(
        2, "", "greet: the name is empty\n"
    )


CLIENT_DRIVER = """
import { createRegistry } from "%(registry)s";
import { register } from "./example.mjs";

const registry = createRegistry();
register(registry.forPlugin("notes"));
const document = { createElement: (tag) => ({ tag, textContent: "" }) };
const card = registry.lookup("note/pin")({ text: "milk" }, {}, { document });
const panel = registry.panels()[0];
const mounted = panel.mount({ document });
mounted.update({ sessionId: "s1" });
console.log(JSON.stringify({
  types: registry.types(),
  owner: registry.ownerOf("note/pin"),
  card: [card.tag, card.textContent],
  panel: [panel.id, panel.owner, panel.order, mounted.element.textContent],
  alert: registry.alertFor("note/pin")({ text: "milk" }),
  status: registry.statuses().map((s) => [s.plugin, s.describe({ pins: 2 })]),
  toolError: registry.toolErrorFor("pin")({ message: "full" }),
}));
"""


@pytest.mark.process
def test_the_client_example_registers_all_five_contributions(tmp_path: Path) -> None:
    (tmp_path / "example.mjs").write_text(EXAMPLES["client"], encoding="utf-8")
    registry = REPO / "host" / "dsh" / "web" / "static" / "registry.js"
    driver = tmp_path / "driver.mjs"
    driver.write_text(CLIENT_DRIVER % {"registry": registry.as_uri()}, encoding="utf-8")

    done = subprocess.run(
        ["node", str(driver)], capture_output=True, text=True, check=False, timeout=60
    )

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "types": ["note/pin"],
        "owner": "notes",
        "card": ["p", "📌 milk"],
        "panel": ["notes", "notes", 20, "s1"],
        "alert": {"title": "📌 milk"},
        "status": [["notes", {"text": "📌 2"}]],
        "toolError": "The note could not be pinned: full",
    }
