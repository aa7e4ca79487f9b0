"""`Contributions`: what the loaded plugins offer — model adapters, the demo's skills, alerts.

(Event views, states, summaries, wake times, client modules and commands are
tested through the Host and the web API: tests/host/host, tests/host/web.)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

import dsh
from dsh.models.demo import DemoModel
from dsh.models.errors import ModelChoiceError
from dsh.models.registry import MODEL_CHOICES, ModelSpec
from dsh.plugins.overlay import parse_overlay
from dsh.testing import load_plugin, running_host, settled
from tests.host.fixtures.distributions import FakeSite

pytestmark = pytest.mark.anyio


class Echo:
    """A model adapter that says back the person's last message, after a prefix."""

    name = "echo"

    def __init__(self, prefix: str, clock: dsh.Clock) -> None:
        self.prefix = prefix
        self.clock = clock

    async def complete(self, request: dsh.ModelRequest, on_delta: Any = None) -> dsh.ModelReply:
        await anyio.lowlevel.checkpoint()
        return dsh.ModelReply(text=f"{self.prefix}{request.messages[-1].text}")


class EchoSettings(dsh.ToolArguments):
    prefix: str = ""


def build_echo(argument: str | None, settings: Any, context: dsh.ModelContext) -> Echo:
    prefix = argument if argument is not None else settings.prefix if settings else ""
    return Echo(prefix, context.clock)


class Plugin:
    def __init__(self, context: dsh.PluginContext[None]) -> None:
        self.context = context


class EchoModels(Plugin):
    """Offers the `echo` adapter, with settings (an entry point in these tests)."""

    @dsh.hookimpl
    def dsh_models(self, register: dsh.RegisterModel) -> None:
        register("echo", build_echo, usage="echo[:PREFIX]", settings=lambda: EchoSettings)


class Refuses(Plugin):
    """Registers one good adapter, then fails: it offers none."""

    @dsh.hookimpl
    def dsh_models(self, register: dsh.RegisterModel) -> None:
        register("loud", build_echo)
        raise RuntimeError("broken plugin")


class Misregisters(Plugin):
    """Each call is refused at once, naming the plugin."""

    def __init__(self, context: dsh.PluginContext[None]) -> None:
        super().__init__(context)
        self.errors: list[str] = []

    @dsh.hookimpl
    def dsh_models(self, register: dsh.RegisterModel) -> None:
        attempts: list[tuple[Any, ...]] = [
            ("Bad Name", build_echo, {}),
            ("demo", build_echo, {}),
            ("echo", "not callable", {}),
            ("echo", build_echo, {"usage": 3}),
        ]
        for name, build, options in attempts:
            try:
                register(name, build, **options)
            except (TypeError, ValueError) as error:
                self.errors.append(str(error))


def install_echo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = FakeSite(tmp_path / "site", monkeypatch)
    site.install("dsh-echo", {"echo": f"{__name__}:EchoModels"})


async def test_the_choices_are_the_built_in_ones_then_the_plugins_stamped_with_their_name() -> None:
    async with running_host() as host:
        await load_plugin(host, EchoModels)
        await load_plugin(host, Refuses)
        choices = host.contributions.model_choices()
    assert list(choices) == [*MODEL_CHOICES, "echo"]  # Refuses failed: it offers nothing
    assert (choices["echo"].usage, choices["echo"].plugin) == ("echo[:PREFIX]", "EchoModels")
    assert choices["demo"].plugin is None


async def test_a_bad_registration_is_refused_at_once_naming_the_plugin() -> None:
    async with running_host() as host:
        plugin, _ = await load_plugin(host, Misregisters)
        await load_plugin(host, EchoModels)
        host.contributions.model_choices()
    assert plugin.errors == [
        "plugin 'Misregisters': register: 'Bad Name' is not a model name (a lowercase letter,"
        " then lowercase letters, digits, '_' or '-'; at most 32)",
        "plugin 'Misregisters': register: 'demo' is a built-in model",
        "plugin 'Misregisters': register: build (and settings, when given) must be callable",
        "plugin 'Misregisters': register: usage must be a str, not int",
    ]


async def test_a_host_given_a_plugins_model_by_name_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_echo(tmp_path, monkeypatch)
    plugins = parse_overlay("[plugins.echo]\n").plugins
    spec = ModelSpec("echo", {"echo": {"prefix": "> "}})
    async with running_host(model=spec, plugins=plugins) as host:  # type: ignore[arg-type]
        assert isinstance(host.model, Echo) and host.model.prefix == "> "
        assert host.model.clock is host.clock
        agent = await host.create_session()
        agent.submit("hi", {"kind": "user"})
        await settled(agent)
        answers = [e.data for e in agent.session.events if e.type == dsh.ASSISTANT_MESSAGE]
    assert answers[-1]["text"] == "> hi"  # type: ignore[index,call-overload]


async def test_a_model_no_loaded_plugin_offers_fails_the_start_with_the_choices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_echo(tmp_path, monkeypatch)
    plugins = parse_overlay("[plugins.echo]\n").plugins
    with pytest.raises(ModelChoiceError, match="unknown model 'ecco'; choose one of: demo, ") as no:
        async with running_host(model=ModelSpec("ecco"), plugins=plugins):  # type: ignore[arg-type]
            pass
    assert str(no.value).endswith("openai, echo[:PREFIX]")
    bad_table = ModelSpec("echo", {"echo": {"prefix": 3}}, Path("o/overlay.toml"))
    with pytest.raises(ModelChoiceError, match=r"o/overlay.toml: host.echo.prefix: "):
        async with running_host(model=bad_table, plugins=plugins):  # type: ignore[arg-type]
            pass


class Twin(Plugin):
    @dsh.hookimpl
    def dsh_models(self, register: dsh.RegisterModel) -> None:
        register("twin", build_echo)


async def test_a_name_two_plugins_register_is_the_first_ones_and_the_second_offers_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with running_host() as host:
        await load_plugin(host, Twin, name="one")
        await load_plugin(host, Twin, name="two")  # called first: the plugin loaded last
        choices = host.contributions.model_choices()
    assert choices["twin"].plugin == "two"
    assert "plugin one offers no model: dsh_models failed: ValueError: plugin 'one': register:" in (
        caplog.text
    )
    assert "plugin 'two' registered 'twin' first" in caplog.text


class Greeting:
    """A demo skill that answers 'hello' and says so in the help."""

    def answer(self, request: dsh.ModelRequest, now_ms: int) -> dsh.ModelReply | None:
        last = request.messages[-1] if request.messages else None
        if last is not None and last.text.strip().lower() == "hello":
            return dsh.ModelReply(text="Hello from a skill.")
        return None

    def help(self, request: dsh.ModelRequest, chinese: bool) -> str | None:
        return "我会打招呼。" if chinese else "I answer 'hello'."


class Teaches(Plugin):
    @dsh.hookimpl
    def dsh_demo_skills(self) -> Sequence[object]:
        return [Greeting(), "not a skill"]


async def test_the_demo_learns_the_skills_of_the_plugins_of_its_host(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with running_host(model=DemoModel()) as host:
        await load_plugin(host, Teaches)
        skills = host.contributions.demo_skills()
        assert [type(skill) for skill in skills] == [Greeting]
        assert host.contributions.demo_skills() == skills  # once per set of plugins
        agent = await host.create_session()
        for text in ("hello", "what can you do?"):
            agent.submit(text, {"kind": "user"})
            await settled(agent)
        answers = [e.data for e in agent.session.events if e.type == dsh.ASSISTANT_MESSAGE]
    assert answers[0]["text"] == "Hello from a skill."  # type: ignore[index,call-overload]
    assert "I answer 'hello'." in answers[1]["text"]  # type: ignore[index,call-overload]
    assert "plugin Teaches returned 'not a skill' from dsh_demo_skills" in caplog.text
    assert all(record.levelno == logging.ERROR for record in caplog.records)


class Alerts(Plugin):
    """A plugin that answers `dsh_session_alert` well, badly, or by raising, by event type."""

    @dsh.hookimpl
    def dsh_session_alert(self, session: dsh.SessionLog, event: dsh.SessionEvent) -> Any:
        answers: dict[str, Any] = {
            "note/good": {"title": "Stretch", "body": "due now", "tag": "t-1"},
            "note/long": {"title": "x" * 201, "tag": "t"},
            "note/control": {"title": "bell\x07", "tag": "t"},
            "note/extra": {"title": "t", "tag": "t", "icon": "x"},
            "note/list": ["title"],
        }
        if event.type == "note/raise":
            raise RuntimeError("boom")
        return answers.get(event.type)


@pytest.mark.parametrize(
    ("event_type", "expected", "logged"),
    [
        ("note/good", ("Stretch", "due now", "t-1"), ""),
        ("note/none", None, ""),
        ("note/long", None, "not an alert: title: String should have at most 200"),
        ("note/control", None, "not an alert: title: String should match pattern"),
        ("note/extra", None, "not an alert: icon: Extra inputs are not permitted"),
        ("note/list", None, "not an alert"),
        ("note/raise", None, "boom"),
    ],
)
async def test_an_alert_is_what_a_plugin_answers_checked_at_the_boundary(
    caplog: pytest.LogCaptureFixture,
    event_type: str,
    expected: tuple[str, str, str] | None,
    logged: str,
) -> None:
    async with running_host() as host:
        await load_plugin(host, Alerts)
        agent = await host.create_session()
        event = host.live.append(agent.session, event_type, {})
        content = host.contributions.alert(agent.session, event)
    if expected is None:
        assert content is None
    else:
        assert content is not None and (content.title, content.body, content.tag) == expected
    assert logged in caplog.text


class Checks(Plugin):
    """A plugin that checks logs: refuses one with a `note/bad` event, fails on `note/raise`."""

    @dsh.hookimpl
    def dsh_session_check(self, session: dsh.SessionLog) -> Any:
        types = {event.type for event in session.scan(0, len(session))}
        if "note/raise" in types:
            raise RuntimeError("boom")
        if "note/number" in types:
            return 42
        return "it holds a bad note" if "note/bad" in types else None


@pytest.mark.parametrize(
    ("event_type", "expected"),
    [
        ("note/fine", {}),
        ("note/bad", {"checks": "it holds a bad note"}),
        ("note/raise", {"checks": "it failed to check the log: RuntimeError: boom"}),
        ("note/number", {"checks": "it answered 42, not a sentence or None"}),
    ],
)
async def test_the_problems_of_a_log_are_every_plugin_s_refusal_and_failure(
    event_type: str, expected: dict[str, str]
) -> None:
    async with running_host() as host:
        await load_plugin(host, Checks, name="checks")
        agent = await host.create_session()
        host.live.append(agent.session, event_type, {})
        assert host.contributions.problems(agent.session) == expected


async def test_a_failing_plugin_tool_is_logged_with_plugin_distribution_and_traceback_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    FakeSite(tmp_path / "site", monkeypatch).plugin("tool-zone", "ZoneTools", version="0.3")
    model = dsh.testing.FakeModel(
        [
            dsh.testing.FakeModel.tool_call("zone_now"),
            dsh.testing.FakeModel.tool_call("broken_now"),
            "done",
            dsh.testing.FakeModel.tool_call("zone_now"),
            "done",
        ]
    )
    async with running_host(model=model) as host:
        await load_plugin(host, "tool-zone")
        agent = await host.create_session()
        with caplog.at_level(logging.ERROR, logger="dsh.agents.tools"):
            agent.submit("what time is it?", time_zone="Europe/Paris")
            await settled(agent)
        agent.submit("a follow-up that names no zone")
        await settled(agent)

        results = [event.data for event in agent.session.events if event.type == dsh.TOOL_RESULT]

    assert results[0]["value"] == "Europe/Paris"
    assert results[1]["error"] == {
        "code": "internal_error",
        "message": "the tool 'broken_now' failed unexpectedly; the host's log has the "
        "details, not this conversation",
    }
    assert results[2]["value"] is None  # the turn's own message named no zone
    [record] = [r for r in caplog.records if r.name == "dsh.agents.tools"]
    assert record.getMessage().startswith(
        "tool 'broken_now' of plugin 'tool-zone' (dsh-tool-zone 0.3) failed in session "
    )
    assert record.exc_info is not None and "secret detail" in str(record.exc_info[1])
