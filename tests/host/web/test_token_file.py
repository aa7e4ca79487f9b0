from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from dsh.persistence.backends import choose_backend
from dsh.web import token_file
from dsh.web.errors import TokenError, TokenFileError
from dsh.web.token_file import TOKEN_FILE, check_token, choose_token, token_path


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_first_start_writes_a_new_token_0600_and_the_next_reuses_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "data" / TOKEN_FILE
    with caplog.at_level(logging.INFO, logger="dsh.web.token_file"):
        first = choose_token(path, environ={})
    assert first.source == "new"
    assert first.path == path
    assert len(first.token) >= 32
    assert path.read_text(encoding="ascii") == f"{first.token}\n"
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700
    assert first.token not in caplog.text
    assert str(path) in caplog.text

    again = choose_token(path, environ={})
    assert (again.token, again.source) == (first.token, "file")
    assert [entry.name for entry in path.parent.iterdir()] == [TOKEN_FILE]  # no temporary left


def test_new_token_replaces_the_kept_one(tmp_path: Path) -> None:
    path = tmp_path / TOKEN_FILE
    kept = choose_token(path, environ={}).token
    rotated = choose_token(path, new=True, environ={})
    assert rotated.source == "new"
    assert rotated.token != kept
    assert choose_token(path, environ={}).token == rotated.token
    assert mode(path) == 0o600


FIXED = "fixed-token-0123456789"


def test_dsh_token_wins_and_leaves_the_file_alone(tmp_path: Path) -> None:
    path = tmp_path / TOKEN_FILE
    chosen = choose_token(path, environ={"DSH_TOKEN": FIXED})
    assert (chosen.token, chosen.source, chosen.path) == (FIXED, "environment", None)
    assert not path.exists()
    # An empty DSH_TOKEN counts as unset.
    assert choose_token(path, environ={"DSH_TOKEN": ""}).source == "new"


def test_new_token_while_dsh_token_is_set_is_an_error_that_says_so(tmp_path: Path) -> None:
    with pytest.raises(TokenFileError, match=r"--new-token cannot replace .* unset DSH_TOKEN"):
        choose_token(tmp_path / TOKEN_FILE, new=True, environ={"DSH_TOKEN": FIXED})


def test_the_process_environment_is_read_when_none_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_TOKEN", "from-the-environment")
    assert choose_token(tmp_path / TOKEN_FILE).token == "from-the-environment"


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ("a", "has 1 character,"),
        ("fifteen-chars-x", "has 15 characters,"),
        (" " * 20, "holds whitespace"),
        ("two-lines-of-token\nsecond-line-here", "holds whitespace"),
        ("trailing-space-token ", "holds whitespace"),
        ("tab\tseparated-token-value", "holds whitespace"),
        ("nbsp\u00a0separated-token-value", "holds whitespace"),
        ("escape\x1b[2K-token-value", "a control character"),
    ],
)
def test_a_short_or_spaced_dsh_token_is_refused_naming_the_rule_not_the_token(
    tmp_path: Path, given: str, problem: str
) -> None:
    with pytest.raises(TokenError) as raised:
        choose_token(tmp_path / TOKEN_FILE, environ={"DSH_TOKEN": given})
    message = str(raised.value)
    assert message.startswith("$DSH_TOKEN is not a usable access token: it ")
    assert problem in message
    assert "at least 16 characters, no whitespace or control characters" in message
    assert "secrets.token_urlsafe" in message
    assert len(given) < 16 or given not in message
    assert not (tmp_path / TOKEN_FILE).exists()  # nothing written


def test_a_token_of_exactly_sixteen_characters_is_accepted(tmp_path: Path) -> None:
    assert check_token("0123456789abcdef", "$DSH_TOKEN") == "0123456789abcdef"
    assert choose_token(tmp_path / TOKEN_FILE, environ={"DSH_TOKEN": "ünï©ødé😀-0123456"}).token


def test_a_token_file_open_to_others_is_refused_naming_the_fix(tmp_path: Path) -> None:
    path = tmp_path / TOKEN_FILE
    path.write_text("secret-token-value\n", encoding="ascii")
    path.chmod(0o644)
    with pytest.raises(TokenFileError) as raised:
        choose_token(path, environ={})
    message = str(raised.value)
    assert str(path) in message
    assert "mode 0644" in message
    assert f"chmod 600 {path}" in message
    assert "--new-token" in message
    assert path.read_text(encoding="ascii") == "secret-token-value\n"  # nothing rewritten
    # --new-token replaces it, with the right mode.
    assert choose_token(path, new=True, environ={}).source == "new"
    assert mode(path) == 0o600


def test_a_token_file_a_person_wrote_is_read_trimmed(tmp_path: Path) -> None:
    path = tmp_path / TOKEN_FILE
    path.write_text("  my-own_token.value~=  \n", encoding="ascii")
    path.chmod(0o600)
    assert choose_token(path, environ={}).token == "my-own_token.value~="


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\n",
        b"two words of a token\n",
        b"line-of-a-token\nline-of-a-token\n",
        b"caf\xc3\xa9-0123456789abcdef\n",
        b"x" * 600,
        b"fifteen-chars-x\n",
    ],
    ids=["empty", "blank", "space", "two-lines", "non-ascii", "too-long", "too-short"],
)
def test_a_token_file_without_a_token_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / TOKEN_FILE
    path.write_bytes(content)
    path.chmod(0o600)
    with pytest.raises(TokenFileError, match=r"does not hold a token.*at least 16.*--new-token"):
        choose_token(path, environ={})


def test_a_symlinked_token_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("secret-token-value\n", encoding="ascii")
    target.chmod(0o600)
    path = tmp_path / TOKEN_FILE
    path.symlink_to(target)
    with pytest.raises(TokenFileError, match="is a symlink"):
        choose_token(path, environ={})


def test_a_token_path_that_is_a_directory_is_refused(tmp_path: Path) -> None:
    path = tmp_path / TOKEN_FILE
    path.mkdir(mode=0o700)
    with pytest.raises(TokenFileError, match="not a regular file"):
        choose_token(path, environ={})


def test_an_unreadable_token_file_is_refused_naming_the_error(tmp_path: Path) -> None:
    path = tmp_path / TOKEN_FILE
    path.write_text("secret-token-value\n", encoding="ascii")
    path.chmod(0o000)
    try:
        if os.access(path, os.R_OK):  # root reads anything: make the open fail another way
            path.chmod(0o600)
            path.unlink()
            (tmp_path / "loop").symlink_to(tmp_path / "loop")
            path = tmp_path / "loop" / TOKEN_FILE
        with pytest.raises(TokenFileError, match="cannot read the token file"):
            choose_token(path, environ={})
    finally:
        if path.exists():
            path.chmod(0o600)


def test_a_data_dir_that_is_a_file_is_an_error_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("", encoding="ascii")
    path = blocker / TOKEN_FILE
    with pytest.raises(TokenFileError, match=rf"the data dir {blocker} is not a directory"):
        choose_token(path, environ={})


def test_a_failed_write_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(source: object, target: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(token_file.os, "replace", refuse)
    with pytest.raises(
        TokenFileError, match=r"cannot write the token file .*No space left on device.*DSH_TOKEN"
    ):
        choose_token(tmp_path / TOKEN_FILE, environ={})
    assert list(tmp_path.iterdir()) == []


def test_the_token_of_a_jsonl_store_lives_in_its_directory_and_others_in_the_data_dir(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    default = choose_backend(None, data_dir, environ={})
    assert token_path(default, data_dir) == data_dir / TOKEN_FILE
    elsewhere = choose_backend(f"jsonl:{tmp_path / 'logs'}", data_dir, environ={})
    assert token_path(elsewhere, data_dir) == tmp_path / "logs" / TOKEN_FILE
    memory = choose_backend("memory:", data_dir, environ={})
    assert token_path(memory, data_dir) == data_dir / TOKEN_FILE
