"""Where dsh keeps its data by default, and that it is ours (a second uid plays the other user)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from dsh.persistence import datadir
from dsh.persistence.datadir import LOG_FOLDERS, check_data_dir, default_data_dir
from dsh.persistence.errors import StorageError, UnsafeDataDir
from dsh.persistence.jsonl.lock import DataDirLock


def test_the_data_dir_is_dsh_data_dir_else_under_the_home(monkeypatch: pytest.MonkeyPatch) -> None:
    assert default_data_dir({"DSH_DATA_DIR": "/srv/dsh"}) == Path("/srv/dsh")
    assert default_data_dir({"DSH_DATA_DIR": ""}) == Path.home() / ".local" / "share" / "dsh"
    monkeypatch.setenv("HOME", "/home/someone")
    monkeypatch.delenv("DSH_DATA_DIR", raising=False)
    assert default_data_dir() == Path("/home/someone/.local/share/dsh")


# -- the data dir is ours or refused ---------------------------------------------------

OTHER = 65534  # nobody
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file away needs root")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data dir as dsh leaves it: 0700, with its logs folders and token."""
    directory = tmp_path / "dsh"
    directory.mkdir(mode=0o700)
    for folder in LOG_FOLDERS:
        (directory / folder).mkdir(mode=0o700)
    (directory / "token").write_text("0123456789abcdef\n")
    (directory / "token").chmod(0o600)
    return directory


def refused(directory: Path) -> str:
    with pytest.raises(UnsafeDataDir) as raised:
        check_data_dir(directory)
    return str(raised.value)


def test_a_data_dir_as_dsh_leaves_it_and_one_not_made_yet_are_accepted(
    data: Path, tmp_path: Path
) -> None:
    check_data_dir(data)
    check_data_dir(tmp_path / "not" / "made" / "yet")


@as_root
def test_a_data_dir_another_user_owns_is_refused_saying_what_to_fix(data: Path) -> None:
    os.chown(data, OTHER, OTHER)
    message = refused(data)
    assert message.startswith(f"the data dir {data} belongs to user nobody (uid 65534), not to")
    assert f"run `chown root {data}` if it is yours, else use a data dir of your own" in message


@as_root
def test_an_owner_without_a_name_is_named_by_uid(data: Path) -> None:
    os.chown(data, 4242, 4242)
    assert "belongs to user 4242 (uid 4242)" in refused(data)


@pytest.mark.parametrize(("mode", "who"), [(0o777, "group and others"), (0o730, "group")])
def test_a_data_dir_others_can_write_is_refused(data: Path, mode: int, who: str) -> None:
    data.chmod(mode)
    message = refused(data)
    assert f"the data dir {data} can be written by {who} (mode {mode:04o})" in message
    assert f"run `chmod go-w {data}`" in message


@as_root
@pytest.mark.parametrize("name", ["token", "sessions", "trash", "attention.jsonl"])
def test_an_entry_another_user_owns_is_refused(data: Path, name: str) -> None:
    entry = data / name
    if not entry.exists():
        entry.write_text("")
    os.chown(entry, OTHER, OTHER)
    assert refused(data).startswith(f"{entry} belongs to user nobody (uid 65534)")


@pytest.mark.parametrize("name", ["token", "sessions", "trash"])
def test_an_entry_others_can_write_is_refused(data: Path, name: str) -> None:
    (data / name).chmod(0o777 if name != "token" else 0o622)
    assert f"{data / name} can be written by" in refused(data)


@pytest.mark.parametrize("name", LOG_FOLDERS)
def test_a_symlinked_logs_folder_is_refused_even_to_a_folder_of_ours(
    data: Path, tmp_path: Path, name: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (data / name).rmdir()
    (data / name).symlink_to(elsewhere)
    message = refused(data)
    assert message.startswith(f"{data / name} is a symlink; dsh keeps logs only in real folders")
    assert f"`mkdir -m 700 {data / name}`" in message


def test_a_logs_folder_that_is_a_file_is_refused(data: Path) -> None:
    (data / "trash").rmdir()
    (data / "trash").write_text("")
    assert refused(data) == f"{data / 'trash'} is not a folder; move it out of the data dir"


@as_root
def test_a_symlink_another_user_made_is_refused(data: Path, tmp_path: Path) -> None:
    link = data / "attention.jsonl"
    link.symlink_to(tmp_path / "theirs.jsonl")
    os.lchown(link, OTHER, OTHER)
    assert refused(data).startswith(f"{link} belongs to user nobody")


@as_root
def test_a_folder_above_that_another_user_owns_is_refused(tmp_path: Path) -> None:
    theirs = tmp_path / "home" / "them"
    theirs.mkdir(parents=True)
    os.chown(theirs, OTHER, OTHER)
    for directory in (theirs / "dsh", theirs / "not" / "made"):
        message = refused(directory)
        assert message.startswith(f"{theirs}, a folder above the data dir {directory}, belongs")
        assert "they could replace the data dir with their own" in message


def test_a_folder_above_that_others_can_write_is_refused_unless_sticky(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    message = refused(shared / "dsh")
    assert f"{shared}, a folder above the data dir {shared / 'dsh'}, can be written" in message
    assert f"run `chmod go-w {shared}` (or `chmod +t {shared}`, as /tmp has)" in message
    shared.chmod(0o1777)  # as /tmp: nobody else can rename or remove what is ours
    check_data_dir(shared / "dsh")


@as_root
def test_a_symlinked_data_dir_is_checked_where_it_leads(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    (theirs / "dsh").mkdir(parents=True, mode=0o700)
    os.chown(theirs, OTHER, OTHER)
    link = tmp_path / "dsh"
    link.symlink_to(theirs / "dsh")
    assert refused(link).startswith(f"{theirs}, a folder above the data dir {link}, belongs")


def test_a_folder_that_cannot_be_looked_at_is_a_storage_error(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(StorageError, match=f"cannot check the data dir {loop}: Too many levels"):
        check_data_dir(loop)


def test_the_lock_refuses_an_unsafe_data_dir_before_it_creates_anything(
    data: Path, tmp_path: Path
) -> None:
    data.chmod(0o777)
    with pytest.raises(UnsafeDataDir):
        DataDirLock(data).acquire()
    assert not (data / "lock").exists()
    fresh = tmp_path / "fresh"
    with DataDirLock(fresh):
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o700  # made by dsh: 0700, as before
    check_data_dir(fresh)


def test_an_entry_that_goes_away_during_the_check_is_passed_over(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_scandir = os.scandir

    class Vanished:
        name = ".token.1a2b.tmp"
        path = str(data / name)

        def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
            raise FileNotFoundError(self.path)  # renamed into place meanwhile

    class Listing:
        def __init__(self, path: Path) -> None:
            self.entries = [*real_scandir(path), Vanished()]

        def __enter__(self) -> list[object]:
            return self.entries

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(datadir.os, "scandir", Listing)
    check_data_dir(data)
