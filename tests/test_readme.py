"""The README's examples run: the overlay parses, the script loads, the plugin works.

Each example is the fenced block right after a `<!-- readme-example: NAME -->`
marker, so editing the README without keeping its examples true fails here.
"""

from __future__ import annotations

import ast
import io
import json
import re
import subprocess
import sys
import tomllib
import types
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from dsh.cli import main
from dsh.host.host import Host
from dsh.models.base import ModelReply
from dsh.models.demo import DemoModel
from dsh.models.openai import OpenAISettings, resolve_config
from dsh.models.registry import check_host, validate_settings
from dsh.models.scripted import parse_script
from dsh.persistence.backends import choose_backend
from dsh.plugins.overlay import load_overlay, parse_overlay
from dsh.testing import FakeClock, settled
from dsh.wake.backends import wake_backend_for
from dsh.web import WebSettings, create_app
from dsh.web.running import remember_overlay
from tests.host.fixtures.distributions import FakeSite
from tests.support.deadlines import WAIT

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
_EXAMPLE = re.compile(r"<!-- readme-example: ([\w-]+) -->\n```\w*\n(.*?)```", re.S)
EXAMPLES = dict(_EXAMPLE.findall(README))


def test_the_readme_has_every_example() -> None:
    assert set(EXAMPLES) == {
        "scripted",
        "overlay",
        "plugin",
        "plugin-pyproject",
        "plugin-test",
        "model",
        "store",
        "wake",
    }


def test_the_readme_test_command_is_what_ci_runs() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "./scripts/test" in README
    assert "exec ./scripts/test" in ci
    assert "./scripts/run" in README


def test_the_overlay_example_parses() -> None:
    overlay = parse_overlay(EXAMPLES["overlay"])

    assert [spec.name for spec in overlay.plugins] == ["tool-schedule", "client-ui-schedule"]
    assert dict(overlay.plugins[0].config) == {"max_segment_seconds": 60}
    assert overlay.host.model == "demo"


def test_the_store_example_sets_the_default_lease_timing() -> None:
    overlay = parse_overlay(EXAMPLES["store"])
    assert overlay.store == parse_overlay("").store
    assert (overlay.store.lease_ttl_seconds, overlay.store.lease_renew_seconds) == (10, 3)


def test_the_wake_example_parses_and_is_what_the_wake_overlay_sets() -> None:
    host = parse_overlay(EXAMPLES["wake"]).host
    assert (host.wake_cold_sessions, host.idle_seconds) == (True, 300.0)
    wake = load_overlay(REPO / "overlays" / "web-schedule-wake").host
    assert (wake.wake_cold_sessions, wake.idle_seconds) == (True, 300.0)
    plain = load_overlay(REPO / "overlays" / "web-schedule")
    assert plain.host.wake_cold_sessions is False
    # The same plugins, the same configuration: only the lifecycle differs, and the
    # wake overlay adds notify (Web Push only), which the note's overlay never loads.
    woken = load_overlay(REPO / "overlays" / "web-schedule-wake").plugins
    assert plain.plugins == tuple(
        replace(spec, source=plain.path) for spec in woken if spec.name != "notify"
    )
    notify = [spec for spec in woken if spec.name == "notify"]
    assert [dict(spec.config) for spec in notify] == [{"web_push": True}]


def test_the_model_settings_example_is_valid_and_configures_deepseek_thinking() -> None:
    overlay = parse_overlay(EXAMPLES["model"])
    check_host(overlay.host.model, overlay.host.model_settings)

    settings = validate_settings(overlay.host.model_settings)["openai"]
    assert isinstance(settings, OpenAISettings)
    config = resolve_config(settings, env={"DEEPSEEK_API_KEY": "sk-readme"})

    assert overlay.host.model == "openai"
    assert (config.profile, config.model, config.thinking, config.reasoning_effort) == (
        "deepseek",
        "deepseek-v4-pro",
        "enabled",
        "max",
    )


def test_the_scripted_model_example_loads() -> None:
    replies = parse_script(EXAMPLES["scripted"])

    assert replies[0].tool_calls[0].name == "schedule_create"
    assert replies[1] == ModelReply(text="Done: reminder rem-1 is set.")


@pytest.mark.anyio
async def test_the_plugin_example_and_its_test_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The README's plugin as the module its pyproject's entry point names.
    plugin = types.ModuleType("dsh_echo.plugin")
    exec(compile(EXAMPLES["plugin"], "README.md", "exec"), plugin.__dict__)
    monkeypatch.setitem(sys.modules, "dsh_echo", types.ModuleType("dsh_echo"))
    monkeypatch.setitem(sys.modules, "dsh_echo.plugin", plugin)
    entry_points = tomllib.loads(EXAMPLES["plugin-pyproject"])["project"]["entry-points"]
    FakeSite(tmp_path / "site", monkeypatch).install("dsh-echo", entry_points["dsh.plugins"])
    tests = types.ModuleType("test_echo")
    exec(compile(EXAMPLES["plugin-test"], "README.md", "exec"), tests.__dict__)

    await tests.test_the_echo_tool_runs_and_unloads()
    await anyio.to_thread.run_sync(tests.test_the_echo_command_prints_its_text)


def test_the_plugin_test_uses_only_public_names() -> None:
    tree = ast.parse(EXAMPLES["plugin"] + "\n" + EXAMPLES["plugin-test"])
    imported = [
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    ]
    assert imported == ["pydantic", "dsh", "dsh.testing"]
    assert "._" not in EXAMPLES["plugin-test"] and "host._" not in EXAMPLES["plugin-test"]


@pytest.mark.process
def test_the_plugin_example_and_its_test_pass_mypy_strict(tmp_path: Path) -> None:
    example = tmp_path / "readme_plugin.py"
    example.write_text(EXAMPLES["plugin"] + "\n" + EXAMPLES["plugin-test"], encoding="utf-8")

    # From the repository root: the project's mypy settings (strict, pydantic plugin)
    # and its cache apply, so this costs little after `mypy` ran.
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", str(example)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )

    assert checked.returncode == 0, checked.stdout + checked.stderr


# -- the tour ----------------------------------------------------------------------

_TOUR = re.compile(r"<!-- readme-tour -->\n(.*?)<!-- /readme-tour -->", re.S)
_STEP = re.compile(r"^\d+\. ", re.M)
_NUMBERS = {"ten": 10, "five": 5, "thirty": 30}
TOUR_TOKEN = "tour-token"
ZONE = "Europe/Berlin"


def tour_steps() -> list[str]:
    """The numbered steps of the README's tour, each on one line."""
    found = _TOUR.search(README)
    assert found is not None, "the README has no <!-- readme-tour --> block"
    return [" ".join(step.split()) for step in _STEP.split(found.group(1)) if step.strip()]


def replies_in(step: str) -> list[list[str]]:
    """What the step says the demo answers: each *italic* text, as the fragments
    between its `…` (the parts that vary, such as a time)."""
    return [
        [part.strip() for part in quoted.split("…") if part.strip()]
        for quoted in re.findall(r"\*([^*]+)\*", step)
        if not quoted.startswith("*")
    ]


def in_order(text: str, fragments: list[str]) -> bool:
    """True if `fragments` occur in `text` in that order (line breaks count as spaces)."""
    text = " ".join(text.split())
    at = 0
    for fragment in fragments:
        found = text.find(fragment, at)
        if found < 0:
            return False
        at = found + len(fragment)
    return True


class Tour:
    """Drives the tour against the host `./scripts/run` starts: the same overlay, model and
    store, in process, with a fake clock (so "wait ten seconds" is instant)."""

    def __init__(self, host: Any, http: Any, clock: Any, data_dir: Path) -> None:
        self.host, self.http, self.clock, self.data_dir = host, http, clock, data_dir
        self.session_id = ""
        self.first_message: str | None = None

    async def events(self) -> dict[str, Any]:
        response = await self.http.get(
            f"/api/sessions/{self.session_id}/events", params={"limit": 500}
        )
        assert response.status_code == 200, response.text
        page: dict[str, Any] = response.json()
        return page

    async def answers_since(self, seq: int) -> str:
        events = (await self.events())["events"]
        return "\n".join(
            event["data"]["text"]
            for event in events
            if event["seq"] >= seq and event["type"] == "message/assistant"
        )

    async def until(self, condition: Any, what: str) -> None:
        try:
            with anyio.fail_after(WAIT):
                # A condition with a deadline: storage and the reminder's owner answer
                # from their own threads and tasks, so poll rather than spin.
                while not await condition():  # noqa: ASYNC110
                    await anyio.sleep(0.01)
        except TimeoutError:
            raise AssertionError(f"the tour's step did not happen: {what}") from None

    async def send(self, step: str, text: str) -> None:
        start = len((await self.events())["events"])
        response = await self.http.post(
            f"/api/sessions/{self.session_id}/messages",
            json={"text": text, "timeZone": ZONE},  # as the browser sends it
        )
        assert response.status_code == 202, response.text
        self.first_message = self.first_message or text
        agent = self.host.agent(self.session_id)
        await settled(agent)
        waited = re.search(r"then wait: (\w+) seconds later", step)
        if waited is not None:
            self.clock.advance(_NUMBERS[waited.group(1)])
        expected = replies_in(step)
        assert expected, f"the step says nothing about the answer: {step}"

        async def answered() -> bool:
            said = await self.answers_since(start)
            return all(in_order(said, fragments) for fragments in expected)

        said = await self.answers_since(start)
        await self.until(answered, f"{text!r} should be answered {expected}, not {said!r}")
        failed = [
            event["data"]
            for event in (await self.events())["events"][start:]
            if event["type"] == "tool/result" and "error" in event["data"]
        ]
        assert not failed, f"{text!r}: a tool failed: {failed}"
        gone = re.search(r"(rem-\d+) has fired, so only (rem-\d+) is left", step)
        if gone is not None:
            said = await self.answers_since(start)
            assert gone.group(1) not in said and gone.group(2) in said, said
        card = re.search(r"the 🔔 card for (rem-\d+) appears", step)
        if card is not None:

            async def receipt() -> bool:
                views = (await self.events())["views"].values()
                return any(view.get("scheduleId") == card.group(1) for view in views)

            await self.until(receipt, f"the receipt of {card.group(1)}")

    async def listed(self, query: str | None = None) -> list[dict[str, Any]]:
        params = {} if query is None else {"q": query}
        response = await self.http.get("/api/sessions", params=params)
        assert response.status_code == 200, response.text
        rows: list[dict[str, Any]] = response.json()["sessions"]
        return rows

    async def step(self, step: str) -> None:
        actions = 0
        if step.startswith("Click **New conversation**"):
            response = await self.http.post("/api/sessions")
            assert response.status_code == 201, response.text
            self.session_id = response.json()["session"]["id"]
            actions += 1
        sent = re.match(r"Send `([^`]+)`", step)
        if sent is not None:
            await self.send(step, sent.group(1))
            actions += 1
        if "titled after that first message" in step:
            (row,) = await self.listed()
            assert row["title"] == self.first_message
            actions += 1
        command = re.search(r"`\.venv/bin/dsh (reminders list[^`]*)` lists ([^.]*?) from", step)
        if command is not None:
            argv = [
                str(REPO / word) if word.startswith("overlays/") else word
                for word in command.group(1).split()
            ]
            listed = await self.cli(*argv)
            for reminder in re.findall(r"rem-\d+", command.group(2)):
                assert reminder in listed, (reminder, listed)
            actions += 1
        renamed = re.search(r"call it `([^`]+)`", step)
        if renamed is not None:
            response = await self.http.patch(
                f"/api/sessions/{self.session_id}", json={"title": renamed.group(1)}
            )
            assert response.status_code == 200, response.text
            actions += 1
        searched = re.search(r"Type `([^`]+)` in the search box", step)
        if searched is not None:
            other = (await self.http.post("/api/sessions")).json()["session"]["id"]
            rows = await self.listed(searched.group(1))
            assert [row["id"] for row in rows] == [self.session_id], (other, rows)
            actions += 1
        if "delete the Session with 🗑" in step:
            response = await self.http.delete(f"/api/sessions/{self.session_id}")
            assert response.status_code == 204, response.text
            assert self.session_id not in {row["id"] for row in await self.listed()}
            actions += 1
        restored = re.search(r"`\.venv/bin/dsh sessions restore ID`", step)
        if restored is not None:
            await self.cli("sessions", "restore", self.session_id[:6])
            titled = re.search(
                r"`\.venv/bin/dsh sessions list` shows it again, titled `(\w+)`", step
            )
            assert titled is not None
            listed = json.loads(await self.cli("sessions", "list", "--json"))["sessions"]
            assert {row["id"]: row["title"] for row in listed}[self.session_id] == titled.group(1)
            actions += 1
        assert actions, f"tests/test_readme.py does not know how to do this step: {step}"

    async def cli(self, *argv: str) -> str:
        """`dsh ...` beside the running host (its own event loop, in a thread)."""
        out, err = io.StringIO(), io.StringIO()
        argv = (*argv, "--data-dir", str(self.data_dir))
        code = await anyio.to_thread.run_sync(lambda: main(list(argv), stdout=out, stderr=err))
        assert code == 0, err.getvalue()
        return out.getvalue()


@pytest.mark.anyio
async def test_the_readme_tour_works_step_by_step_with_the_demo_model(tmp_path: Path) -> None:
    overlay = load_overlay(REPO / "overlays" / "web-schedule-wake")
    run = (REPO / "scripts" / "run").read_text(encoding="utf-8")
    assert overlay.host.model == "demo" and "--overlay overlays/web-schedule-wake" in run
    clock = FakeClock()
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    # What `./scripts/run`'s dsh web leaves for the commands: the overlay it runs with.
    remember_overlay(data_dir, REPO / "overlays" / "web-schedule-wake" / "overlay.toml")
    store = choose_backend(None, data_dir)
    host = Host(
        backend=store.open(),
        model=DemoModel(clock),
        plugins=overlay.plugins,
        clock=clock,
        clean_empty_sessions=True,
        wake_backend=wake_backend_for(store),
        idle_seconds=overlay.host.idle_seconds,
    )
    async with host:
        app = create_app(host, WebSettings(token=TOUR_TOKEN))
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(
            transport=transport,
            base_url="http://127.0.0.1:8765",
            headers={"Authorization": f"Bearer {TOUR_TOKEN}"},
        ) as http:
            tour = Tour(host, http, clock, data_dir)
            steps = tour_steps()
            assert len(steps) >= 13
            for step in steps:
                await tour.step(step)
