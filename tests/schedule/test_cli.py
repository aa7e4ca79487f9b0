"""`dsh reminders list`: the plugin's command, run through the real `dsh` command line."""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from dsh import visible
from dsh.cli import main
from dsh.persistence import JsonlBackend
from dsh.session.log import Session
from dsh_tool_schedule.cli import clip, local_time

from ..support.terminal import HOSTILE, obeyed
from .logs import create2, cron, events, every, raw, record, user

FAR = 4_102_444_800_000  # 2100-01-01T00:00:00Z: still ahead whenever these tests run
PAST = 946_684_800_000  # 2000-01-01T00:00:00Z: long gone


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def overlay(tmp_path: Path) -> Path:
    path = tmp_path / "overlay.toml"
    path.write_text("[plugins.tool-schedule]\n", encoding="utf-8")
    return path


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "data"
    monkeypatch.setenv("DSH_DATA_DIR", str(path))
    monkeypatch.delenv("DSH_OVERLAY", raising=False)
    return path


def dsh(*argv: str) -> Result:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return Result(code, out.getvalue(), err.getvalue())


def store(data_dir: Path, session_id: str, *entries: tuple[str, object], created: int) -> None:
    async def write() -> None:
        backend = JsonlBackend(data_dir)
        header = Session.new(session_id, cwd="/work", created_at=created).header
        await backend.initialize(header, events(entries, time=created))  # type: ignore[arg-type]
        await backend.aclose()

    anyio.run(write)


def stored(data_dir: Path) -> None:
    """Three Sessions: one with reminders, one without, one with a rejected log."""
    store(
        data_dir,
        "groceries",
        user(zone="Europe/Berlin"),
        create2(record("rem-1", prompt="buy\n  milk", first_ms=FAR)),
        create2(every(86_400, reminder_id="rem-2", prompt="water", first_ms=FAR)),
        create2(record("rem-3", prompt="call", first_ms=FAR, paused=True)),
        created=PAST,
    )
    store(data_dir, "quiet", user(), created=PAST + 1)
    store(
        data_dir,
        "broken",
        create2(
            cron(
                "0 9 * * *",
                FAR + 12_600_000,
                reminder_id="rem-1",
                zone="Asia/Kolkata",
                prompt="yoga",
            )
        ),
        raw({"version": 2, "change": "nope"}),
        created=PAST + 2,
    )


def test_the_table_lists_every_active_reminder_in_the_zone_asked_for(
    overlay: Path, data_dir: Path
) -> None:
    stored(data_dir)

    result = dsh("reminders", "list", "--overlay", str(overlay), "--time-zone", "Asia/Tokyo")

    assert result.code == 0
    assert rows(result.out) == [
        ["SESSION", "ID", "PROMPT", "RULE", "NEXT", "STATE"],
        [
            "broken",
            "rem-1",
            "yoga",
            "at 09:00 every day (Asia/Kolkata)",
            "2100-01-01 12:30 JST",
            "not delivered",
        ],
        [
            "groceries",
            "rem-1",
            "buy milk",
            "once, 10 seconds after it was set",
            "2100-01-01 09:00 JST",
            "scheduled",
        ],
        ["groceries", "rem-2", "water", "every 1 day", "2100-01-01 09:00 JST", "scheduled"],
        [
            "groceries",
            "rem-3",
            "call",
            "once, 10 seconds after it was set",
            "2100-01-01 09:00 JST",
            "paused",
        ],
    ]
    assert result.err == (
        "dsh: session broken: the schedule log of this Session is invalid at seq 1: invalid "
        "schedule/change: data: Input tag 'nope' found using 'change' does not match any of "
        "the expected tags: 'create', 'update', 'delete', 'dispatch'; none of its reminders is "
        "delivered\n"
    )


def test_json_is_each_session_s_plugin_state(overlay: Path, data_dir: Path) -> None:
    stored(data_dir)

    result = dsh("--overlay", str(overlay), "reminders", "list", "--json")
    one = dsh("--overlay", str(overlay), "reminders", "list", "--json", "--session", "quiet")

    listing = json.loads(result.out)
    assert [session["id"] for session in listing["sessions"]] == ["broken", "groceries"]
    broken, groceries = listing["sessions"]
    assert broken["error"]["code"] == "schedule_log_invalid"
    assert [view["id"] for view in groceries["reminders"]] == ["rem-1", "rem-2", "rem-3"]
    assert groceries["reminders"][0]["prompt"] == "buy\n  milk"  # JSON keeps it as stored
    assert groceries["reminders"][0]["state"] == "scheduled"
    assert json.loads(one.out) == {"sessions": [{"id": "quiet", "reminders": []}]}


def test_the_environment_overlay_and_the_machine_zone_are_the_defaults(
    overlay: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store(data_dir, "s1", create2(record(first_ms=PAST)), created=PAST)
    monkeypatch.setenv("DSH_OVERLAY", str(overlay))

    result = dsh("reminders", "list")

    assert result.code == 0
    row = result.out.splitlines()[1]
    assert row.startswith("s1       rem-1  stretch  once, 10 seconds after it was set  ")
    assert row.endswith("  overdue")  # as of now, not as of the log
    assert local_time("2000-01-01T00:00:00.000Z", None) in row


def test_nothing_to_list_is_said_on_stderr(overlay: Path, data_dir: Path) -> None:
    store(data_dir, "quiet", user(), created=PAST)

    result = dsh("reminders", "list", "--overlay", str(overlay))
    empty = dsh("reminders", "list", "--overlay", str(overlay), "--data-dir", str(data_dir / "x"))
    memory = dsh("reminders", "list", "--overlay", str(overlay), "--store", "memory:")

    assert (result.code, result.out) == (0, "")
    assert result.err == f"no reminders in {data_dir}\n"
    assert (empty.code, empty.err) == (  # a data dir that is not there is not "no reminders"
        1,
        f"dsh: error: the data dir {data_dir / 'x'} does not exist; pass the one dsh web uses "
        "with --data-dir DIR (or set $DSH_DATA_DIR)\n",
    )
    assert memory.err == "no reminders in memory (kept only while the process runs)\n"


def test_an_unknown_or_malformed_session_and_a_bad_zone_are_errors(
    overlay: Path, data_dir: Path
) -> None:
    stored(data_dir)

    unknown = dsh("reminders", "list", "--overlay", str(overlay), "--session", "nope")
    malformed = dsh("reminders", "list", "--overlay", str(overlay), "--session", "../etc")
    zone = dsh("reminders", "list", "--overlay", str(overlay), "--time-zone", "Mars/Olympus")
    no_action = dsh("reminders", "--overlay", str(overlay))

    assert (unknown.code, unknown.out) == (1, "")
    assert unknown.err == f"dsh: error: no session 'nope' in {data_dir}\n"
    assert malformed.code == 2 and "invalid session id" in malformed.err.lower()
    assert zone.code == 2 and "unknown time zone 'Mars/Olympus'" in zone.err
    assert no_action.code == 2 and "required: ACTION" in no_action.err


def test_a_log_that_cannot_be_read_is_named_and_the_others_are_listed(
    overlay: Path, data_dir: Path
) -> None:
    stored(data_dir)
    log = data_dir / "sessions" / "quiet.jsonl"
    header, event = log.read_text(encoding="utf-8").splitlines()
    log.write_text(f"{header}\nnot json\n{event}\n", encoding="utf-8")  # a corrupt middle line

    listing = dsh("reminders", "list", "--overlay", str(overlay), "--json")
    one = dsh("reminders", "list", "--overlay", str(overlay), "--session", "quiet")

    # The store skips it when listing (and says so); asked for by id, it fails.
    assert listing.code == 0
    assert "dsh: warning: skipping" in listing.err and "quiet.jsonl" in listing.err
    assert [session["id"] for session in json.loads(listing.out)["sessions"]] == [
        "broken",
        "groceries",
    ]
    assert (one.code, one.out) == (1, "")
    assert one.err.startswith("dsh: session quiet cannot be read: ")
    assert "line 2" in one.err and "no reminders" not in one.err


def test_without_an_overlay_the_error_names_the_plugin(data_dir: Path) -> None:
    result = dsh("reminders", "list")

    assert result.code == 2
    assert "'reminders' is a command of plugin tool-schedule (dsh-tool-schedule" in result.err
    assert len(result.err.splitlines()) == 1


def rows(out: str) -> list[list[str]]:
    return [re.split(r"  +", line) for line in out.splitlines()]


def test_a_prompt_is_one_clipped_line() -> None:
    assert clip("a\n b\tc") == "a b c"
    assert clip("x" * 50, width=10) == "xxxxxxxxx…"
    assert local_time(None, None) == "-"


def hostile(data_dir: Path) -> None:
    """A reminder whose prompt, and a rejected log whose message, carry terminal controls."""
    store(
        data_dir,
        "hostile",
        user(),
        create2(record("rem-1", prompt=f"pay{HOSTILE}", first_ms=FAR)),
        created=PAST,
    )
    store(data_dir, "rejected", raw({"version": 2, "change": f"x{HOSTILE}"}), created=PAST + 1)


def test_hostile_prompts_and_messages_are_shown_as_text(overlay: Path, data_dir: Path) -> None:
    hostile(data_dir)

    result = dsh("reminders", "list", "--overlay", str(overlay))

    assert result.code == 0 and obeyed(result.out + result.err) == []
    assert len(result.out.splitlines()) == 2  # the header and the one reminder: nothing erased
    assert f"pay{visible(HOSTILE)[:30]}" in result.out  # clipped to PROMPT_WIDTH before escaping
    assert len(result.err.splitlines()) == 1 and result.err.startswith("dsh: session rejected: ")
    assert "\\u001b]0;pwned\\u0007" in result.err


def test_hostile_prompts_are_exact_in_json(overlay: Path, data_dir: Path) -> None:
    hostile(data_dir)

    result = dsh("reminders", "list", "--overlay", str(overlay), "--json")

    listing = json.loads(result.out)
    by_id = {session["id"]: session for session in listing["sessions"]}
    assert by_id["hostile"]["reminders"][0]["prompt"] == f"pay{HOSTILE}"
    assert result.out == json.dumps(listing, ensure_ascii=False, indent=2) + "\n"  # byte for byte
    assert "\x9b" in result.out and "\u202e" in result.out
