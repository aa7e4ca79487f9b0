"""The VAPID key pair: made once, kept private, never silently replaced."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from dsh_notify.webpush.encoding import b64url, unb64url
from dsh_notify.webpush.keys import KEY_FILE, VapidKeyError, VapidKeys, load_key_file

from dsh import StorageLocation

from .conftest import harness


async def test_get_key_gives_the_uncompressed_point_and_the_same_one_after_a_restart(
    jsonl: StorageLocation, tmp_path: Path
) -> None:
    async with harness(jsonl) as test:
        first = (await test.client.get("/api/push/key")).json()
    async with harness(jsonl) as test:
        second = (await test.client.get("/api/push/key")).json()
    assert first == second
    point = unb64url(first["publicKey"])
    assert len(point) == 65 and point[0] == 4
    ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    assert stat.S_IMODE(os.stat(tmp_path / KEY_FILE).st_mode) == 0o600
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".")]


async def test_in_memory_the_pair_lasts_as_long_as_the_process_object() -> None:
    async with harness() as one, harness() as two:
        first = (await one.client.get("/api/push/key")).json()
        second = (await two.client.get("/api/push/key")).json()
    assert first != second


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"not json", "unreadable"),
        (b"\xff\xfe", "unreadable"),
        (b"[]", "version 1"),
        (b'{"version": 2}', "version 1"),
        (b'{"version": 1, "privateKey": 5, "secret": "x"}', "base64url strings"),
        (b'{"version": 1, "privateKey": "***", "secret": "x"}', "not base64url"),
        (b'{"version": 1, "privateKey": "AAAA", "secret": "x"}', "32-byte"),
        (
            json.dumps({"version": 1, "privateKey": b64url(bytes(32)), "secret": "x"}).encode(),
            "unreadable",
        ),
    ],
)
def test_an_unreadable_key_file_is_a_start_up_error_and_is_kept(
    tmp_path: Path, content: bytes, says: str
) -> None:
    (tmp_path / KEY_FILE).write_bytes(content)
    with pytest.raises(VapidKeyError, match=says) as raised:
        load_key_file(tmp_path)
    assert str(tmp_path / KEY_FILE) in str(raised.value)
    assert (tmp_path / KEY_FILE).read_bytes() == content


def test_a_short_secret_is_refused() -> None:
    record = VapidKeys.new().to_record()
    with pytest.raises(ValueError, match="secret is not 32 bytes"):
        VapidKeys.from_record({**record, "secret": b64url(b"short")})


def test_a_key_file_that_cannot_be_read_or_written_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / KEY_FILE).mkdir()
    with pytest.raises(VapidKeyError, match="cannot read"):
        load_key_file(tmp_path)
    with pytest.raises(VapidKeyError, match="cannot write"):
        load_key_file(tmp_path / "missing-dir")


def test_a_restored_copy_with_loose_permissions_is_made_private_again(tmp_path: Path) -> None:
    keys = load_key_file(tmp_path)
    os.chmod(tmp_path / KEY_FILE, 0o644)
    assert load_key_file(tmp_path).public_key == keys.public_key
    assert stat.S_IMODE(os.stat(tmp_path / KEY_FILE).st_mode) == 0o600


async def test_open_fails_naming_the_file_when_the_kept_pair_is_unreadable(
    jsonl: StorageLocation, tmp_path: Path
) -> None:
    from dsh_notify.webpush import WebPush

    from .conftest import Recorder, context

    (tmp_path / KEY_FILE).write_text("{}")
    push = WebPush(context(jsonl, Recorder()))
    with pytest.raises(VapidKeyError, match=str(tmp_path / KEY_FILE)):
        await push.open()
    assert (tmp_path / KEY_FILE).read_text() == "{}"
    with pytest.raises(RuntimeError, match="open"):
        push.channel  # noqa: B018
