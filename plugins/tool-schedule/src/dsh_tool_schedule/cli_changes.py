"""`dsh reminders add|pause|resume|snooze|delete`: changes, made by the running `dsh web`.

    dsh reminders add --session ID (--in DURATION | --at TIME | --every DURATION [--at TIME]
                      | --cron EXPR) [--time-zone ZONE] [--until TIME] [--count N]
                      [--misfire latest|skip] PROMPT
    dsh reminders pause|resume|delete --session ID REMINDER
    dsh reminders snooze --session ID REMINDER --for DURATION

A command never starts an agent, so each change is one of this plugin's
actions (`actions.py`: `create`, `pause`, `resume`, `snooze`, `delete`) run by
the `dsh web` that serves the data dir (`dsh.CommandContext.session_action`):
it answers once the change is durable, and the Session's page follows at
once. The arguments mirror `schedule_create`'s: `--in` is `after_seconds`,
`--every` `every_seconds` (with `--at`, its first occurrence), `--at` alone
`at`, `--cron` `cron`; a DURATION is `90s`, `10m`, `2h`, `1d`, `1h30m` or a
number of seconds; TIME is `YYYY-MM-DDTHH:MM` in `--time-zone` (default: the
zone of the person's latest message in that Session, else UTC).

What changed is printed as the row `dsh reminders list` shows, its NEXT in the
reminder's own zone (`delete`: one line). No `dsh web` running on the data dir,
and every refusal of the host (an unknown reminder, one already paused, a rule
that is not one), is one `dsh: error: …` line with the host's sentence, exit 1.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import Any, Final

from pydantic import JsonValue

from dsh import ActionError, CommandContext, HostNotRunning, add_store_options, visible

from .ids import parse_reminder_id
from .zones import load_zone

__all__ = ["configure_changes", "duration", "run_change"]

_PART = re.compile(r"(\d+)([smhd])")
_UNIT: Final = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
_RULES: Final = ("in_seconds", "every_seconds", "cron")
Show = Callable[[CommandContext, str, dict[str, Any]], None]


def configure_changes(actions: Any, session_id: Callable[[str], str]) -> None:
    """Add the change subcommands to `actions`, the subparsers of `dsh reminders`;
    `session_id` checks a `--session` value."""
    add = actions.add_parser(
        "add",
        help="add a reminder to a Session (through the running dsh web)",
        description="Add a reminder to a Session; the dsh web serving the data dir stores it.",
    )
    _session(add, session_id)
    add.add_argument("prompt", metavar="PROMPT", help="what to remind about")
    rule = add.add_argument_group("the rule (one of them; --at may start --every)")
    rule.add_argument(
        "--in",
        dest="in_seconds",
        type=duration,
        metavar="DURATION",
        help="once, this long from now (90s, 10m, 1h30m, 1d)",
    )
    rule.add_argument("--at", metavar="TIME", help="once, at this local time (2026-12-25T09:00)")
    rule.add_argument(
        "--every",
        dest="every_seconds",
        type=duration,
        metavar="DURATION",
        help="repeatedly, this often (1h, 1d)",
    )
    rule.add_argument("--cron", metavar="EXPR", help="repeatedly, e.g. '0 9 * * MON-FRI'")
    add.add_argument(
        "--time-zone",
        type=_zone_name,
        metavar="ZONE",
        help="the IANA zone TIME and cron are read in (default: the zone of the Session's "
        "latest message, else UTC)",
    )
    add.add_argument("--until", metavar="TIME", help="recurring only: nothing after this time")
    add.add_argument("--count", type=_count, metavar="N", help="recurring only: N times in all")
    add.add_argument(
        "--misfire",
        choices=("latest", "skip"),
        help="recurring only: deliver the latest occurrence missed while closed, or skip them",
    )
    for name in ("pause", "resume", "delete"):
        _on_one(actions, name, f"{name} a reminder (through the running dsh web)", session_id)
    snooze = _on_one(
        actions,
        "snooze",
        "postpone a reminder's next time (through the running dsh web)",
        session_id,
    )
    snooze.add_argument(
        "--for",
        dest="seconds",
        type=duration,
        required=True,
        metavar="DURATION",
        help="how long (10m, 1h)",
    )


def _on_one(
    actions: Any, name: str, help: str, session_id: Callable[[str], str]
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = actions.add_parser(
        name, help=help, description=help[0].upper() + help[1:] + "."
    )
    _session(parser, session_id)
    parser.add_argument("reminder", type=_reminder, metavar="REMINDER", help="its id, e.g. rem-1")
    return parser


def _session(parser: argparse.ArgumentParser, session_id: Callable[[str], str]) -> None:
    parser.add_argument(
        "--session", type=session_id, required=True, metavar="ID", help="the Session"
    )
    add_store_options(parser)


async def run_change(args: argparse.Namespace, context: CommandContext, show: Show) -> int:
    """Run the change `args.reminders_action` names; `show(context, session_id, view)`
    prints the reminder it answers. Returns the exit code (module docstring)."""
    name: str = args.reminders_action
    if name == "add":
        request = _create_args(args)
        if request is None:
            context.note(
                "dsh: error: give one rule: --in DURATION, --at TIME, --every DURATION "
                "(with --at: its first time) or --cron EXPR (see 'dsh reminders add --help')"
            )
            return 2
        action, payload = "create", request
    elif name == "snooze":
        action, payload = "snooze", {"id": args.reminder, "seconds": args.seconds}
    else:
        action, payload = name, {"id": args.reminder}
    try:
        result = await context.session_action(args.session, action, payload)
    except (ActionError, HostNotRunning) as error:
        context.note(f"dsh: error: {visible(_sentence(error))}")
        return 1
    if name == "delete":
        context.line(f"deleted {args.reminder} of session {args.session}")
    else:
        assert isinstance(result, dict) and isinstance(result["reminder"], dict)
        show(context, args.session, result["reminder"])
    return 0


def _sentence(error: Exception) -> str:
    return error.message if isinstance(error, ActionError) else str(error)


def _create_args(args: argparse.Namespace) -> dict[str, JsonValue] | None:
    named = [name for name in _RULES if getattr(args, name) is not None]
    rules = named + (["at"] if args.at is not None else [])
    if rules not in (["in_seconds"], ["at"], ["every_seconds"], ["every_seconds", "at"], ["cron"]):
        return None
    given: dict[str, JsonValue] = {
        "prompt": args.prompt,
        "after_seconds": args.in_seconds,
        "at": args.at,
        "every_seconds": args.every_seconds,
        "cron": args.cron,
        "time_zone": args.time_zone,
        "until": args.until,
        "count": args.count,
        "misfire": args.misfire,
    }
    return {key: value for key, value in given.items() if value is not None}


def duration(value: str) -> int:
    """`90s`, `10m`, `2h`, `1d`, `1h30m` or `600` as whole seconds (at least 1)."""
    text = value.strip().lower()
    seconds = int(text) if text.isdigit() else None
    if seconds is None and text and _PART.sub("", text) == "":
        seconds = sum(int(amount) * _UNIT[unit] for amount, unit in _PART.findall(text))
    if not seconds:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a duration; write e.g. 90s, 10m, 2h, 1d or 1h30m"
        )
    return seconds


def _count(value: str) -> int:
    if value.isdigit() and int(value) >= 1:
        return int(value)
    raise argparse.ArgumentTypeError(f"{value!r} is not a count; give a whole number from 1")


def _reminder(value: str) -> str:
    try:
        return parse_reminder_id(value)[0]
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def _zone_name(value: str) -> str:
    try:
        load_zone(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error
    return value
