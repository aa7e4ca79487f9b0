"""`dsh reminders add|pause|resume|snooze|delete`: changes a running host makes (`cli_changes`).

The commands run with a `CommandContext` whose action poster hands each action
to this plugin's `dsh_session_action` on a live agent — what `dsh web` does
with `POST /api/sessions/{id}/actions` (the HTTP leg and `web.json` are the
host's, tested in `tests/host/cli/test_host_actions.py` and end to end in
`tests/host/web/test_launch.py`).
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import Any

import pytest
from pydantic import JsonValue

from dsh import Agent, HostNotRunning
from dsh.plugins.commands import CommandContext, Streams
from dsh_tool_schedule.cli import RemindersCommand
from dsh_tool_schedule.cli_changes import duration

from ..support.terminal import HOSTILE, obeyed
from .conftest import Harness, changes

pytestmark = pytest.mark.anyio


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dsh reminders")
    RemindersCommand(grace_ms=60_000).configure(parser)
    return parser


class Run:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err


async def reminders(
    harness: Harness, agent: Agent | None, *argv: str, tmp_path: Path | None = None
) -> Run:
    """`dsh reminders *argv` against `agent` (None: no dsh web is running)."""
    args = parser().parse_args([*argv, "--data-dir", str(tmp_path or "/nowhere")])
    posted: list[tuple[str, str]] = []

    async def post(
        directory: Path, session_id: str, plugin: str, action: str, body: dict[str, JsonValue]
    ) -> JsonValue:
        if agent is None:
            raise HostNotRunning(
                f"no dsh web is running on {directory}: start it, e.g. ./scripts/run"
            )
        assert (session_id, plugin) == (agent.session.id, "tool-schedule")
        posted.append((session_id, action))
        pending = harness.plugin.dsh_session_action(agent=agent, name=action, args=body)
        assert pending is not None
        result: JsonValue = await pending
        return result

    out, err = io.StringIO(), io.StringIO()
    context = CommandContext("tool-schedule", Streams(out, err), args, post_action=post)
    code = await RemindersCommand(grace_ms=60_000).run(args, context)
    return Run(code, out.getvalue(), err.getvalue())


async def test_add_in_a_duration_prints_the_row_list_would_show(harness: Harness) -> None:
    agent = harness.open()
    sid = agent.session.id

    run = await reminders(harness, agent, "add", "--session", sid, "--in", "10m", "stretch")

    assert (run.code, run.err) == (0, "")
    header, row = run.out.splitlines()
    assert header.split() == ["SESSION", "ID", "PROMPT", "RULE", "NEXT", "STATE"]
    assert row.split()[:3] == [sid, "rem-1", "stretch"]
    assert "once, 10 minutes after it was set" in row
    assert "2026-01-01 00:10 UTC" in row and row.endswith("scheduled")


@pytest.mark.parametrize(
    ("argv", "rule"),
    [
        (["--at", "2026-12-25T09:00", "--time-zone", "Europe/Berlin"], {"kind": "at"}),
        (["--every", "1h30m", "--count", "3"], {"kind": "every", "seconds": 5400}),
        (
            ["--every", "1d", "--at", "2026-01-02T09:00", "--until", "2026-02-01T00:00"],
            {"kind": "every", "seconds": 86_400},
        ),
        (["--cron", "0 9 * * MON-FRI", "--misfire", "skip"], {"kind": "cron"}),
    ],
)
async def test_add_mirrors_the_tool_s_rules(
    harness: Harness, argv: list[str], rule: dict[str, Any]
) -> None:
    agent = harness.open()

    run = await reminders(harness, agent, "add", "--session", agent.session.id, *argv, "tea")

    assert (run.code, run.err) == (0, "")
    (created,) = changes(agent.session)
    assert isinstance(created, dict) and isinstance(created["record"], dict)
    stored = created["record"]
    assert stored["prompt"] == "tea"
    assert isinstance(stored["rule"], dict) and rule.items() <= stored["rule"].items()


async def test_add_shows_next_in_the_reminder_s_own_zone(harness: Harness) -> None:
    agent = harness.open()
    run = await reminders(
        harness,
        agent,
        "add",
        "--session",
        agent.session.id,
        "--at",
        "2026-12-25T09:00",
        "--time-zone",
        "Asia/Tokyo",
        "open gifts",
    )
    assert "2026-12-25 09:00 JST" in run.out


@pytest.mark.parametrize(
    "rule",
    [[], ["--in", "5m", "--every", "1h"], ["--at", "2026-12-25T09:00", "--cron", "0 9 * * *"]],
    ids=["none", "two", "at with cron"],
)
async def test_add_needs_exactly_one_rule(harness: Harness, rule: list[str]) -> None:
    agent = harness.open()

    run = await reminders(harness, agent, "add", "--session", agent.session.id, *rule, "tea")

    assert (run.code, run.out) == (2, "")
    assert run.err == (
        "dsh: error: give one rule: --in DURATION, --at TIME, --every DURATION (with --at: its "
        "first time) or --cron EXPR (see 'dsh reminders add --help')\n"
    )
    assert changes(agent.session) == []


async def test_pause_resume_snooze_and_delete_change_the_reminder(harness: Harness) -> None:
    agent = harness.open()
    sid = agent.session.id
    await reminders(harness, agent, "add", "--session", sid, "--in", "1m", "tea")

    paused = await reminders(harness, agent, "pause", "--session", sid, "rem-1")
    resumed = await reminders(harness, agent, "resume", "--session", sid, "rem-1")
    snoozed = await reminders(harness, agent, "snooze", "--session", sid, "rem-1", "--for", "5m")
    deleted = await reminders(harness, agent, "delete", "--session", sid, "rem-1")

    assert paused.out.splitlines()[1].endswith("paused")
    assert resumed.out.splitlines()[1].endswith("scheduled")
    assert "once, snoozed to 2026-01-01 00:06 (UTC)" in snoozed.out
    assert "2026-01-01 00:06 UTC" in snoozed.out
    assert deleted.out == f"deleted rem-1 of session {sid}\n"
    assert [change["change"] for change in changes(agent.session)] == [  # type: ignore[index,call-overload]
        "create",
        "update",
        "update",
        "update",
        "delete",
    ]


async def test_a_refusal_is_the_host_s_sentence_on_one_line_and_exit_1(harness: Harness) -> None:
    agent = harness.open()
    sid = agent.session.id

    gone = await reminders(harness, agent, "pause", "--session", sid, "rem-7")
    bad = await reminders(harness, agent, "add", "--session", sid, "--cron", "61 * * * *", "x")

    assert (gone.code, gone.out) == (1, "")
    assert gone.err.startswith("dsh: error: 'rem-7' is not an active reminder")
    assert gone.err.count("\n") == 1
    assert bad.code == 1 and bad.err.startswith("dsh: error: ") and "cron" in bad.err


async def test_without_a_running_host_it_says_so_and_how_to_start_one(
    harness: Harness, tmp_path: Path
) -> None:
    run = await reminders(harness, None, "delete", "--session", "abc", "rem-1", tmp_path=tmp_path)
    assert (run.code, run.out) == (1, "")
    assert (
        run.err
        == f"dsh: error: no dsh web is running on {tmp_path}: start it, e.g. ./scripts/run\n"
    )


async def test_a_hostile_prompt_is_shown_not_obeyed(harness: Harness) -> None:
    agent = harness.open()
    run = await reminders(
        harness, agent, "add", "--session", agent.session.id, "--in", "1h", HOSTILE
    )
    assert run.code == 0 and not obeyed(run.out)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("10m", 600),
        ("2h", 7200),
        ("1d", 86_400),
        ("1h30m", 5400),
        ("600", 600),
        (" 5M ", 300),
    ],
)
def test_durations(text: str, seconds: int) -> None:
    assert duration(text) == seconds


@pytest.mark.parametrize("text", ["", "0", "0m", "5x", "m", "1.5h", "-5m", "10 m"])
def test_what_is_not_a_duration_is_a_usage_error(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=r"is not a duration; write e\.g\. 90s"):
        duration(text)


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["pause", "--session", "s", "r1"], "is not a reminder id"),
        (["add", "--session", "s", "--in", "5m", "--count", "0", "x"], "is not a count"),
        (["add", "--session", "s", "--in", "5m", "--time-zone", "Mars/Base", "x"], "Mars/Base"),
        (["snooze", "--session", "s", "rem-1"], "--for"),
    ],
)
def test_bad_arguments_are_usage_errors(
    argv: list[str], problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        parser().parse_args(argv)
    assert caught.value.code == 2
    assert problem in capsys.readouterr().err
