from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsh import visible
from dsh.base.width import display_width
from dsh.session.facts import without_bidi

from ...support.terminal import HOSTILE, obeyed
from .conftest import Cli

CREATED = 1_767_225_600_000  # 2026-01-01T00:00:00.000Z


def header(session_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "id": session_id,
        "cwd": "/work",
        "createdAt": CREATED,
        "origin": {"kind": "web"},
        "lineage": None,
        "delegationDepth": 0,
        **extra,
    }


def event(seq: int, type: str, data: Any, time: int = CREATED) -> dict[str, Any]:
    return {"seq": seq, "type": type, "time": time, "data": data}


def line(record: dict[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"


def store(
    data_dir: Path, head: dict[str, Any], events: list[dict[str, Any]], tail: str = ""
) -> Path:
    """Write one Session in the public JSONL format (README, "Storage format")."""
    path = data_dir / "sessions" / f"{head['id']}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(line(head) + "".join(line(item) for item in events) + tail, encoding="utf-8")
    return path


CONVERSATION = [
    event(
        0,
        "message/user",
        {"text": "remind me in 10 seconds to stretch", "source": {"kind": "user"}},
    ),
    event(
        1,
        "message/assistant",
        {
            "text": "",
            "toolCalls": [
                {
                    "id": "c1",
                    "name": "schedule_create",
                    "arguments": {"prompt": "stretch", "after_seconds": 10},
                }
            ],
        },
        time=CREATED + 5,
    ),
    event(
        2,
        "schedule/change",
        {
            "version": 1,
            "change": "create",
            "record": {
                "id": "r1",
                "kind": "after",
                "prompt": "stretch",
                "afterSeconds": 10,
                "scheduledAt": "2026-01-01T00:00:10.000Z",
            },
        },
    ),
    event(3, "tool/result", {"callId": "c1", "name": "schedule_create", "value": {"id": "r1"}}),
    event(4, "turn/end", {"status": "ok"}),
]


# -- list ----------------------------------------------------------------------------


def forked_and_renamed(data_dir: Path) -> None:
    """beta (a conversation), alpha (a fork of it, newer) and gamma (renamed, oldest)."""
    store(data_dir, header("beta"), CONVERSATION)
    store(
        data_dir,
        header(
            "alpha",
            createdAt=CREATED + 1000,
            lineage={"parentId": "beta", "forkedAt": 2},
            seedLength=3,
        ),
        [*CONVERSATION[:2], event(2, "session/end-seed", {})],
    )
    store(
        data_dir,
        header("gamma", createdAt=CREATED - 1000),
        [event(0, "session/title", {"title": "Taxes 2026"})],
    )


def test_sessions_list_shows_each_stored_session_with_its_title_newest_first(
    dsh: Cli, tmp_path: Path
) -> None:
    forked_and_renamed(tmp_path)

    result = dsh("sessions", "list", "--data-dir", str(tmp_path))

    assert result.code == 0
    assert result.err == ""
    assert result.out.splitlines() == [
        "ID     CREATED (UTC)             EVENTS  TITLE                               LINEAGE",
        "alpha  2026-01-01T00:00:01.000Z  3       remind me in 10 seconds to stretch  "
        "fork of beta (first 2 events)",
        "beta   2026-01-01T00:00:00.000Z  5       remind me in 10 seconds to stretch  -",
        "gamma  2025-12-31T23:59:59.000Z  1       Taxes 2026                          -",
    ]


def test_sessions_list_json_has_the_fields_of_the_http_list(dsh: Cli, tmp_path: Path) -> None:
    forked_and_renamed(tmp_path)

    result = dsh("sessions", "list", "--json", "--data-dir", str(tmp_path))
    empty = dsh("sessions", "list", "--json", "--store", "memory:")

    assert result.code == 0 and result.err == ""
    listed = json.loads(result.out)
    for row in listed["sessions"]:  # when its file was last written
        assert isinstance(row.pop("updatedAt"), int)
    assert listed == {
        "sessions": [
            {
                "id": "alpha",
                "createdAt": CREATED + 1000,
                "length": 3,
                "lineage": {"parentId": "beta", "forkedAt": 2},
                "title": "remind me in 10 seconds to stretch",
            },
            {
                "id": "beta",
                "createdAt": CREATED,
                "length": 5,
                "lineage": None,
                "title": "remind me in 10 seconds to stretch",
            },
            {
                "id": "gamma",
                "createdAt": CREATED - 1000,
                "length": 1,
                "lineage": None,
                "title": "Taxes 2026",
            },
        ]
    }
    assert (empty.code, json.loads(empty.out), empty.err) == (0, {"sessions": []}, "")


def test_sessions_list_reads_dsh_data_dir_by_default(
    dsh: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store(tmp_path, header("only"), [])
    monkeypatch.setenv("DSH_DATA_DIR", str(tmp_path))

    result = dsh("sessions", "list")

    assert result.code == 0
    assert result.out.splitlines()[1].split()[0] == "only"


def test_sessions_list_of_an_empty_data_dir_says_so(dsh: Cli, tmp_path: Path) -> None:
    result = dsh("sessions", "list", "--data-dir", str(tmp_path))

    assert result.code == 0
    assert result.out == ""
    assert result.err == f"no sessions in {tmp_path}\n"


@pytest.mark.parametrize("action", [("list",), ("show", "s1"), ("restore", "s1")])
def test_a_data_dir_that_does_not_exist_is_an_error_saying_so_and_creates_nothing(
    dsh: Cli, tmp_path: Path, action: tuple[str, ...]
) -> None:
    data_dir = tmp_path / "typo"

    result = dsh("sessions", *action, "--data-dir", str(data_dir))

    assert result.code == 1
    assert result.out == ""
    assert result.err == (
        f"dsh: error: the data dir {data_dir} does not exist; pass the one dsh web uses "
        "with --data-dir DIR (or set $DSH_DATA_DIR)\n"
    )
    assert not data_dir.exists()


def test_sessions_list_skips_a_corrupt_log_and_names_it_on_stderr(dsh: Cli, tmp_path: Path) -> None:
    path = tmp_path / "sessions" / "bad.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text('{"version": 2}\n', encoding="utf-8")
    (tmp_path / "sessions" / "notes.txt").write_text("mine", encoding="utf-8")

    result = dsh("sessions", "list", "--data-dir", str(tmp_path))

    assert result.code == 0
    warnings = result.err.splitlines()
    assert warnings[0].startswith(f"dsh: warning: skipping {path} in the session list: ")
    assert "line 1: invalid header" in warnings[0]
    assert "notes.txt" in warnings[1]
    assert warnings[2] == f"no sessions in {tmp_path}"
    assert "Traceback" not in result.err


def test_sessions_list_fails_cleanly_when_the_data_dir_is_not_a_directory(
    dsh: Cli, tmp_path: Path
) -> None:
    not_a_directory = tmp_path / "file"
    not_a_directory.write_text("", encoding="utf-8")

    result = dsh("sessions", "list", "--data-dir", str(not_a_directory))

    assert result.code == 1
    assert result.err == (
        f"dsh: error: the data dir {not_a_directory} is not a directory; "
        "pass a directory with --data-dir DIR\n"
    )


# -- show ----------------------------------------------------------------------------


def test_sessions_show_prints_the_header_and_one_line_per_event(dsh: Cli, tmp_path: Path) -> None:
    store(tmp_path, header("s1"), CONVERSATION)

    result = dsh("sessions", "show", "s1", "--data-dir", str(tmp_path))

    assert result.code == 0
    assert result.err == ""
    assert result.out.splitlines() == [
        "session  s1",
        "title    remind me in 10 seconds to stretch",
        "created  2026-01-01T00:00:00.000Z",
        "origin   web",
        "cwd      /work",
        "lineage  -",
        "depth    0",
        "events   5",
        "",
        "0  2026-01-01T00:00:00.000Z  message/user       "
        'user: "remind me in 10 seconds to stretch"',
        "1  2026-01-01T00:00:00.005Z  message/assistant  "
        '-> schedule_create({"prompt":"stretch","after_seconds":10})',
        "2  2026-01-01T00:00:00.000Z  schedule/change    "
        '{"version":1,"change":"create","record":{"id":"r1","kind":"after","prompt":"stretch",'
        '"afterSeconds":10,"scheduledAt":...',
        '3  2026-01-01T00:00:00.000Z  tool/result        schedule_create = {"id":"r1"}',
        "4  2026-01-01T00:00:00.000Z  turn/end           ok",
    ]


def test_sessions_show_of_a_fork_names_its_parent_and_inherited_seed(
    dsh: Cli, tmp_path: Path
) -> None:
    store(
        tmp_path,
        header("child", lineage={"parentId": "s1", "forkedAt": 1}, seedLength=2),
        [CONVERSATION[0], event(1, "session/end-seed", {})],
    )

    result = dsh("sessions", "show", "child", "--data-dir", str(tmp_path))

    lines = result.out.splitlines()
    assert "lineage  fork of s1 (first 1 events)" in lines
    assert "seed     events 0-1 were inherited" in lines
    assert lines[-1].endswith(
        "session/end-seed  (end of the seed: a new live lifecycle starts here)"
    )


def test_sessions_show_notes_an_ignored_torn_tail(dsh: Cli, tmp_path: Path) -> None:
    store(tmp_path, header("torn"), [CONVERSATION[0]], tail='{"seq":1,"type":"turn/en')

    result = dsh("sessions", "show", "torn", "--data-dir", str(tmp_path))

    assert result.code == 0
    lines = result.out.splitlines()
    assert "events     1" in lines
    assert "torn tail  ignored (an incomplete last line, left by a crash)" in lines


def test_sessions_show_of_a_session_without_events_prints_only_the_header(
    dsh: Cli, tmp_path: Path
) -> None:
    store(tmp_path, header("empty"), [])

    result = dsh("sessions", "show", "empty", "--data-dir", str(tmp_path))

    assert result.code == 0
    assert result.out.splitlines()[-1] == "events   0"


def test_sessions_show_of_an_unknown_id_fails_with_exit_1(dsh: Cli, tmp_path: Path) -> None:
    result = dsh("sessions", "show", "nobody", "--data-dir", str(tmp_path))

    assert result.code == 1
    assert result.out == ""
    assert result.err == (
        f"dsh: error: no session 'nobody' in {tmp_path}; dsh sessions list shows the stored ones\n"
    )


def test_sessions_show_takes_a_unique_start_of_an_id(dsh: Cli, tmp_path: Path) -> None:
    store(tmp_path, header("3f2a9c01d4e5"), CONVERSATION)
    store(tmp_path, header("3f2a7700aaaa"), [event(0, "session/title", {"title": "Other"})])
    store(tmp_path, header("b1"), [])

    unique = dsh("sessions", "show", "3f2a9", "--data-dir", str(tmp_path))
    ambiguous = dsh("sessions", "show", "3f2a", "--data-dir", str(tmp_path))
    exact = dsh("sessions", "show", "b1", "--data-dir", str(tmp_path))

    assert unique.code == 0 and unique.out.splitlines()[0] == "session  3f2a9c01d4e5"
    assert ambiguous.code == 1 and ambiguous.out == ""
    assert ambiguous.err == (
        f"dsh: error: '3f2a' starts 2 sessions in {tmp_path}: 3f2a7700aaaa (Other), "
        "3f2a9c01d4e5 (remind me in 10 seconds to stretch); give more of the id\n"
    )
    assert exact.code == 0 and exact.out.splitlines()[:2] == ["session  b1", "title    -"]


@pytest.mark.parametrize("bad", ["../etc/passwd", "a b", "-x", "x" * 65])
def test_sessions_show_of_an_invalid_id_is_a_usage_error(
    dsh: Cli, tmp_path: Path, bad: str
) -> None:
    result = dsh("sessions", "show", "--data-dir", str(tmp_path), "--", bad)

    assert result.code == 2
    assert result.out == ""
    assert "argument ID: invalid session id" in result.err


def test_sessions_show_fails_on_a_corrupt_line_naming_the_file_and_line(
    dsh: Cli, tmp_path: Path
) -> None:
    path = store(
        tmp_path, header("broken"), [CONVERSATION[0]], tail="not json\n" + line(CONVERSATION[1])
    )

    result = dsh("sessions", "show", "broken", "--data-dir", str(tmp_path))

    assert result.code == 1
    assert result.err.startswith(f"dsh: error: {path}: line 3")


# -- the store ------------------------------------------------------------------------


def test_the_store_option_and_dsh_store_pick_the_same_store_as_dsh_web(
    dsh: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    store(elsewhere, header("s1"), CONVERSATION)

    by_option = dsh("sessions", "list", "--store", f"jsonl:{elsewhere}")
    monkeypatch.setenv("DSH_STORE", f"jsonl:{elsewhere}")
    by_environment = dsh("sessions", "list", "--data-dir", str(tmp_path / "ignored"))

    assert by_option.code == by_environment.code == 0
    assert by_option.out == by_environment.out
    assert by_option.out.splitlines()[1].startswith("s1 ")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://localhost", "names no database"),
        ("sqlite:x.db", "unknown store 'sqlite'"),
        ("jsonl:/tmp/x?sidecars=maybe", "sidecars"),
        ("jsonl:/tmp/x?colour=blue", "colour"),
        ("nothing-here", "is not NAME:LOCATION"),
    ],
)
def test_a_store_that_cannot_be_used_is_one_clear_error(dsh: Cli, url: str, message: str) -> None:
    result = dsh("sessions", "list", "--store", url)

    assert result.code == 1
    assert result.err.startswith("dsh: error: ") and message in result.err
    assert "Traceback" not in result.err


def test_an_empty_memory_store_lists_nothing(dsh: Cli) -> None:
    result = dsh("sessions", "list", "--store", "memory:")

    assert (result.code, result.out) == (0, "")
    assert result.err == "no sessions in memory (kept only while the process runs)\n"


# -- restore ----------------------------------------------------------------------------


def test_sessions_restore_brings_a_trashed_session_back(dsh: Cli, tmp_path: Path) -> None:
    path = store(tmp_path, header("s1"), CONVERSATION)
    trashed = tmp_path / "trash" / "s1.jsonl"
    trashed.parent.mkdir()
    path.rename(trashed)

    result = dsh("sessions", "restore", "s1", "--data-dir", str(tmp_path))

    assert (result.code, result.out, result.err) == (0, "restored session s1\n", "")
    assert path.exists() and not trashed.exists()
    assert dsh("sessions", "list", "--data-dir", str(tmp_path)).out.count("s1") == 1


def test_sessions_restore_takes_a_unique_start_of_a_trashed_id(dsh: Cli, tmp_path: Path) -> None:
    (tmp_path / "trash").mkdir()
    for session_id in ("3f2a9c01", "3f2a7700"):
        path = store(tmp_path, header(session_id), CONVERSATION)
        path.rename(tmp_path / "trash" / path.name)

    ambiguous = dsh("sessions", "restore", "3f2a", "--data-dir", str(tmp_path))
    unique = dsh("sessions", "restore", "3f2a9", "--data-dir", str(tmp_path))
    none = dsh("sessions", "restore", "b1", "--data-dir", str(tmp_path))

    assert ambiguous.code == 1
    assert ambiguous.err == (
        f"dsh: error: '3f2a' starts 2 sessions in the trash of {tmp_path}: 3f2a7700, 3f2a9c01; "
        "give more of the id\n"
    )
    assert (unique.code, unique.out) == (0, "restored session 3f2a9c01\n")
    assert none.code == 1 and none.err == (
        f"dsh: error: no session 'b1' in the trash of {tmp_path}; "
        "only a deleted Session can be restored\n"
    )


def test_sessions_restore_refuses_what_it_cannot_restore(dsh: Cli, tmp_path: Path) -> None:
    missing = dsh("sessions", "restore", "s1", "--data-dir", str(tmp_path))
    assert missing.code == 1 and "no session 's1' in the trash" in missing.err

    store(tmp_path, header("s1"), CONVERSATION)
    (tmp_path / "trash").mkdir()
    (tmp_path / "trash" / "s1.jsonl").write_text(line(header("s1")), encoding="utf-8")
    taken = dsh("sessions", "restore", "s1", "--data-dir", str(tmp_path))
    assert taken.code == 1 and "session s1 is already stored" in taken.err

    invalid = dsh("sessions", "restore", "../s1", "--data-dir", str(tmp_path))
    assert invalid.code == 2


def test_sessions_restore_of_an_id_the_trash_does_not_hold_says_so_in_any_store(
    dsh: Cli,
) -> None:
    result = dsh("sessions", "restore", "s1", "--store", "memory:")

    assert result.code == 1
    assert result.err == (
        "dsh: error: no session 's1' in the trash of memory (kept only while the process "
        "runs); only a deleted Session can be restored\n"
    )


# -- hostile text ------------------------------------------------------------------------


def hostile_sessions(data_dir: Path) -> None:
    """Two Sessions whose title, messages, tool text and cwd carry terminal controls."""
    store(
        data_dir,
        header("prompted", cwd=f"/work{HOSTILE}"),
        [
            event(0, "message/user", {"text": f"hi{HOSTILE}", "source": {"kind": "user"}}),
            event(
                1,
                "message/assistant",
                {
                    "text": HOSTILE,
                    "toolCalls": [{"id": "c1", "name": "echo", "arguments": {"x": HOSTILE}}],
                },
            ),
            event(
                2,
                "tool/result",
                {"callId": "c1", "name": "echo", "error": {"code": "E", "message": HOSTILE}},
            ),
            event(3, "tool/result", {"callId": "c2", "name": f"x{HOSTILE}", "value": 1}),
            event(4, "plugin/note", {"note": HOSTILE}),
            event(5, "turn/end", {"status": "error", "error": {"code": "E", "message": HOSTILE}}),
        ],
    )
    store(
        data_dir,
        header("titled", createdAt=CREATED + 1),
        [event(0, "session/title", {"title": f"Taxes{HOSTILE}"})],
    )


# A title never holds a bidi control (`dsh.session.facts.without_bidi`); the rest stays.
TITLED = without_bidi(HOSTILE)


def test_sessions_list_shows_hostile_titles_as_text(dsh: Cli, tmp_path: Path) -> None:
    hostile_sessions(tmp_path)

    result = dsh("sessions", "list", "--data-dir", str(tmp_path))

    assert result.code == 0 and obeyed(result.out + result.err) == []
    lines = result.out.splitlines()
    assert len(lines) == 3  # the header and one row per Session: nothing climbed or erased
    assert "\\u001b]0;pwned\\u0007" in lines[1] and "\\u001b]52;c;" in lines[2]
    assert "\\u009b31mdesrever\\rover\\u0000" in lines[1]  # a title holds no bidi control


def test_sessions_show_shows_hostile_headers_and_events_as_text(dsh: Cli, tmp_path: Path) -> None:
    hostile_sessions(tmp_path)

    shown = [dsh("sessions", "show", name, "--data-dir", str(tmp_path)) for name in ("p", "t")]

    for result in shown:
        assert result.code == 0 and obeyed(result.out + result.err) == []
    prompted, titled = (result.out.splitlines() for result in shown)
    assert len(prompted) == 8 + 1 + 6  # the header, a blank line, one line per event
    assert prompted[1].startswith("title    hi\\u001b]0;pwned\\u0007\\u001b[2K")
    assert prompted[4] == f"cwd      /work{visible(HOSTILE)}"
    assert titled[1] == f"title    Taxes{visible(TITLED)}"


def test_an_ambiguous_start_names_hostile_titles_as_text(dsh: Cli, tmp_path: Path) -> None:
    hostile_sessions(tmp_path)
    store(tmp_path, header("tax", createdAt=CREATED + 2), [])

    result = dsh("sessions", "show", "t", "--data-dir", str(tmp_path))

    assert result.code == 1 and obeyed(result.err) == [] and len(result.err.splitlines()) == 1
    assert f"titled (Taxes{visible(TITLED)})" in result.err


def test_sessions_list_json_keeps_hostile_titles_exactly(dsh: Cli, tmp_path: Path) -> None:
    hostile_sessions(tmp_path)

    result = dsh("sessions", "list", "--json", "--data-dir", str(tmp_path))

    listed = json.loads(result.out)
    titles = [row["title"] for row in listed["sessions"]]
    assert titles == [f"Taxes{TITLED}", "hi" + TITLED.split("\r")[0]]  # the first line
    assert result.out == json.dumps(listed, ensure_ascii=False) + "\n"  # byte for byte
    assert "\x9b" in result.out  # written exactly, not escaped


def test_a_usage_error_quotes_the_arguments_as_text(dsh: Cli, tmp_path: Path) -> None:
    result = dsh("sessions", "list", "--data-dir", str(tmp_path), f"extra{HOSTILE}")

    assert result.code == 2 and obeyed(result.err) == []
    assert f"unrecognized arguments: extra{visible(HOSTILE)}" in result.err


def test_sessions_restore_refuses_a_data_dir_others_can_write(dsh: Cli, tmp_path: Path) -> None:
    trashed = tmp_path / "trash" / "s1.jsonl"
    trashed.parent.mkdir(parents=True)
    trashed.write_text(line(header("s1")), encoding="utf-8")
    (tmp_path / "trash").chmod(0o777)

    result = dsh("sessions", "restore", "s1", "--data-dir", str(tmp_path))

    assert result.code == 1
    assert result.err == (
        f"dsh: error: {tmp_path / 'trash'} can be written by group and others (mode 0777): "
        f"other users could plant a token or move the logs; run `chmod go-w {tmp_path / 'trash'}`\n"
    )
    assert trashed.exists()  # nothing moved


def test_sessions_list_lines_up_chinese_titles_and_escaped_ones(dsh: Cli, tmp_path: Path) -> None:
    titles = {"s1": "开会", "s2": "周报：下周一早上8点", "s3": "tea\x1b[2Jtime", "s4": "plain"}
    for offset, (session_id, title) in enumerate(titles.items()):
        store(
            tmp_path,
            header(session_id, createdAt=CREATED + offset),
            [event(0, "session/title", {"title": title})],
        )

    result = dsh("sessions", "list", "--data-dir", str(tmp_path))

    assert result.code == 0
    lines = result.out.splitlines()
    assert obeyed(result.out) == []
    # LINEAGE, after the TITLE column, starts at one terminal column on every row.
    starts = {display_width(line[: line.rindex("-")]) for line in lines[1:]}
    assert len(starts) == 1
    assert {display_width(lines[0][: lines[0].index("LINEAGE")])} == starts
