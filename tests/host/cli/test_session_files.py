"""`dsh sessions export` / `import`: a Session's log as one file in the storage format,
checked on the way in, byte-identical across JSONL and PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from dsh.wake.jsonl import JsonlWakeBackend

from .conftest import Cli
from .test_sessions import CONVERSATION, event, header, line, store

WAKE_OVERLAY = Path(__file__).resolve().parents[3] / "overlays" / "web-schedule-wake"


@pytest.fixture(params=["jsonl", pytest.param("postgres", marks=pytest.mark.pg)])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> list[str]:
    """The store options of a store to import into (empty)."""
    if request.param == "jsonl":
        return ["--store", f"jsonl:{tmp_path / 'into'}"]
    return ["--store", request.getfixturevalue("pg_url")]


def test_an_export_is_the_stored_file_byte_for_byte(dsh: Cli, tmp_path: Path) -> None:
    path = store(tmp_path, header("beta"), CONVERSATION)
    to_stdout = dsh("sessions", "export", "be", "--data-dir", str(tmp_path))
    assert to_stdout.code == 0, to_stdout.err
    assert to_stdout.out.encode() == path.read_bytes()
    out = tmp_path / "beta.jsonl"
    to_file = dsh("sessions", "export", "beta", "-o", str(out), "--data-dir", str(tmp_path))
    assert (to_file.code, to_file.out) == (0, "")
    assert to_file.err == f"exported session beta (5 events) to {out}\n"
    assert out.read_bytes() == path.read_bytes()


def test_a_session_goes_from_jsonl_into_a_store_and_comes_back_byte_identical(
    dsh: Cli, tmp_path: Path, target: list[str]
) -> None:
    original = store(tmp_path / "from", header("beta"), CONVERSATION)
    imported = dsh("sessions", "import", str(original), *target)
    assert imported.code == 0, imported.err
    assert imported.out.startswith("imported session beta (5 events) into ")
    exported = tmp_path / "again.jsonl"
    back = dsh("sessions", "export", "beta", "-o", str(exported), *target)
    assert back.code == 0, back.err
    assert exported.read_bytes() == original.read_bytes()
    into_jsonl = dsh("sessions", "import", str(exported), "--data-dir", str(tmp_path / "back"))
    assert into_jsonl.code == 0, into_jsonl.err
    assert (tmp_path / "back" / "sessions" / "beta.jsonl").read_bytes() == original.read_bytes()


def test_an_id_that_is_taken_is_refused_and_new_id_imports_a_fork_beside_it(
    dsh: Cli, tmp_path: Path, target: list[str]
) -> None:
    original = store(tmp_path / "from", header("beta"), CONVERSATION)
    assert dsh("sessions", "import", str(original), *target).code == 0
    again = dsh("sessions", "import", str(original), *target)
    assert again.code == 1
    assert "session beta already exists in" in again.err and "--new-id" in again.err
    forked = dsh("sessions", "import", str(original), "--new-id", *target)
    assert forked.code == 0, forked.err
    new_id = forked.out.split()[2]
    assert new_id != "beta" and " as a fork of beta (6 events) " in forked.out
    shown = dsh("sessions", "show", new_id, *target)
    assert "fork of beta (first 5 events)" in shown.out and "session/end-seed" in shown.out


def test_a_file_that_is_not_a_whole_valid_log_is_refused_naming_the_line(
    dsh: Cli, tmp_path: Path
) -> None:
    good = store(tmp_path / "from", header("beta"), CONVERSATION).read_bytes()
    cases = {
        b"": "no complete header line",
        b'{"id": "beta"}\n': "line 1: invalid header",
        good[: good.rindex(b"\n", 0, len(good) - 1) + 5]: "line 6: the last line is incomplete",
        good.replace(b'"seq":3', b'"seq":7'): "line 5",
    }
    for number, (data, said) in enumerate(cases.items()):
        path = tmp_path / f"bad-{number}.jsonl"
        path.write_bytes(data)
        result = dsh("sessions", "import", str(path), "--data-dir", str(tmp_path / "into"))
        assert result.code == 1, data
        assert said in result.err and "nothing was imported" in result.err, result.err
    assert not (tmp_path / "into" / "sessions").exists()


def test_a_schedule_log_its_plugin_refuses_is_not_imported(dsh: Cli, tmp_path: Path) -> None:
    conversation = json.loads(json.dumps(CONVERSATION).replace('"r1"', '"rem-1"'))
    broken = [
        *conversation,
        event(5, "schedule/change", {"version": 1, "change": "dispatch", "id": "rem-9"}),
    ]
    path = store(tmp_path / "from", header("beta"), broken)
    result = dsh(
        "sessions", "import", str(path), "--overlay", str(WAKE_OVERLAY),
        "--data-dir", str(tmp_path / "into"),
    )  # fmt: skip
    assert result.code == 1
    assert result.err.startswith(
        f"dsh: error: {path}: the plugin tool-schedule refuses it: "
        "its schedule log is invalid at seq 5: "
    )
    assert not (tmp_path / "into" / "sessions").exists()
    fine = store(tmp_path / "ok", header("beta"), conversation)
    result = dsh(
        "sessions", "import", str(fine), "--overlay", str(WAKE_OVERLAY),
        "--data-dir", str(tmp_path / "into"),
    )  # fmt: skip
    assert result.code == 0, result.err


def test_an_import_marks_the_session_for_the_wake_index_where_there_is_one(
    dsh: Cli, tmp_path: Path
) -> None:
    into = tmp_path / "into"
    path = store(tmp_path / "from", header("beta"), CONVERSATION)
    first = dsh("sessions", "import", str(path), "--data-dir", str(into))
    assert first.code == 0 and "builds it from every log" in first.err
    (into / "wake-index.jsonl").write_text(
        line({"format": "dsh-wake-index", "version": 1}), encoding="utf-8"
    )
    other = store(tmp_path / "from", header("gamma"), CONVERSATION)
    assert dsh("sessions", "import", str(other), "--data-dir", str(into)).code == 0
    loaded = anyio.run(JsonlWakeBackend(into).load)
    assert {key: (entry.wake_at, entry.dirty) for key, entry in loaded.entries.items()} == {
        "gamma": (None, True)
    }
    assert json.loads((into / "sessions" / "gamma.jsonl").read_text().splitlines()[0])["id"] == (
        "gamma"
    )


def test_an_id_in_the_trash_is_refused_and_files_that_cannot_be_used_are_named(
    dsh: Cli, tmp_path: Path
) -> None:
    path = store(tmp_path / "from", header("beta"), CONVERSATION)
    into = tmp_path / "into"
    assert dsh("sessions", "import", str(path), "--data-dir", str(into)).code == 0
    (into / "trash").mkdir()
    (into / "sessions" / "beta.jsonl").rename(into / "trash" / "beta.jsonl")
    trashed = dsh("sessions", "import", str(path), "--data-dir", str(into))
    assert (
        trashed.code == 1
        and "the trash of" in trashed.err
        and "holds a session beta" in (trashed.err)
    )
    missing = dsh("sessions", "import", str(tmp_path / "nope.jsonl"), "--data-dir", str(into))
    assert missing.code == 1 and missing.err.startswith(f"dsh: error: cannot read {tmp_path}")
    unwritable = dsh(
        "sessions", "export", "beta", "-o", str(tmp_path / "no" / "such" / "dir.jsonl"),
        "--data-dir", str(tmp_path / "from"),
    )  # fmt: skip
    assert unwritable.code == 1 and "cannot write" in unwritable.err


@pytest.mark.process
def test_an_export_to_a_real_stdout_is_the_files_bytes(tmp_path: Path) -> None:
    said = event(0, "message/user", {"text": "ça va ✓", "source": {"kind": "user"}})
    path = store(tmp_path, header("beta"), [said])
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "dsh.cli",
            "sessions",
            "export",
            "beta",
            "--data-dir",
            str(tmp_path),
        ],
        capture_output=True,
        timeout=60,
        env={**os.environ, "PYTHONIOENCODING": "ascii"},  # the bytes never pass an encoder
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == path.read_bytes()
