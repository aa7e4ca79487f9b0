"""Proven lines (`dsh.persistence.jsonl.proven`): what a whole-log read may skip, and when not."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import pytest

from dsh.persistence import JsonlBackend
from dsh.persistence.errors import CorruptLog
from dsh.persistence.jsonl import index as line_index
from dsh.persistence.jsonl.proven import Claim, claim_of, read_log
from dsh.session.event import SessionEvent

from .contract import events, header
from .test_jsonl import LONG, corrupt, log_path, long_session, sidecar

pytestmark = pytest.mark.anyio

PATH = Path("/logs/s1.jsonl")
# Valid JSON, but not the canonical form: the serializer writes 1.5.
HAND_WRITTEN = b'{"seq":%d,"type":"note/hand","time":1,"data":1.50}'


def log_of(*lines: bytes) -> tuple[bytes, int]:
    """A whole log holding `lines` after the header, and the offset where they start."""
    head = header().canonical().to_json().encode() + b"\n"
    return head + b"".join(line + b"\n" for line in lines), len(head)


def canonical(seq: int) -> bytes:
    return events(seq, seq + 1)[0].to_bytes()


def claim_over(data: bytes, start: int, lines: int, end: int | None = None) -> Claim:
    end = len(data) if end is None else end
    return Claim(lines, end, zlib.crc32(data[start:end]))


# -- read_log ---------------------------------------------------------------------------


def test_without_a_claim_every_line_is_read_in_full_and_the_canonical_ones_are_proven() -> None:
    lines = (canonical(0), canonical(1), HAND_WRITTEN % 2, canonical(3), HAND_WRITTEN % 4)
    data, _ = log_of(*lines)
    index, found = read_log(PATH, "s1", data, None, None)
    assert [event.seq for event in found] == [0, 1, 2, 3, 4]
    assert found[2].data_json == found[4].data_json == b"1.5"  # read in full: canonical
    assert index.proven == 2  # up to the first line that is not canonical
    assert index.crc == zlib.crc32(canonical(0) + b"\n" + canonical(1) + b"\n")
    assert claim_of(index.proven, index.bounds, index.crc) == Claim(2, index.bounds[2], index.crc)


def test_a_claim_whose_crc_holds_is_trusted_without_checking_the_data_again() -> None:
    data, start = log_of(canonical(0), HAND_WRITTEN % 1)
    index, found = read_log(PATH, "s1", data, None, claim_over(data, start, 2))
    # Only a claim that held can have let these bytes through unchanged.
    assert found[1].data_json == b"1.50"
    assert found[0] == events(0, 1)[0]
    assert index.proven == 2 and index.crc == zlib.crc32(data[start:])
    assert index.length == 2
    assert {name: list(seqs) for name, seqs in index.by_type.items()} == {
        "message/user": [0],
        "note/hand": [1],
    }


def test_lines_after_the_claimed_ones_are_read_in_full_and_extend_the_proof() -> None:
    data, start = log_of(canonical(0), canonical(1), canonical(2))
    first = len(data) - len(canonical(2)) - 1
    index, found = read_log(PATH, "s1", data, None, claim_over(data, start, 2, first))
    assert list(found) == events(0, 3)
    assert index.proven == 3 and index.crc == zlib.crc32(data[start:])


@pytest.mark.parametrize(
    "case",
    ["crc", "past-the-end", "not-at-a-newline", "too-many-lines", "wrong-seq", "not-canonical"],
)
def test_a_claim_that_does_not_hold_proves_nothing(case: str) -> None:
    data, start = log_of(canonical(0), HAND_WRITTEN % 1)
    claim = claim_over(data, start, 2)
    if case == "crc":
        claim = Claim(2, claim.end, claim.crc ^ 1)
    elif case == "past-the-end":
        claim = Claim(2, len(data) + 1, claim.crc)
    elif case == "not-at-a-newline":
        claim = claim_over(data, start, 2, len(data) - 1)
    elif case == "too-many-lines":
        claim = Claim(3, claim.end, claim.crc)
    elif case == "wrong-seq":
        data, start = log_of(canonical(0), HAND_WRITTEN % 7)
        with pytest.raises(CorruptLog, match="seq 7 where 1 belongs"):
            read_log(PATH, "s1", data, None, claim_over(data, start, 2))
        return
    else:  # a claimed line that is not even in the canonical envelope
        data, start = log_of(canonical(0), b'{"type":"note/hand","seq":1,"time":1,"data":1}')
        claim = claim_over(data, start, 2)
    index, found = read_log(PATH, "s1", data, None, claim)
    assert [event.seq for event in found] == [0, 1]
    assert found[1].data_json in (b"1.5", b"1")  # read in full
    assert index.proven == 1


def test_a_claim_over_no_lines_or_beyond_the_index_is_none() -> None:
    assert claim_of(0, [10, 20], 5) is None
    assert claim_of(2, [10, 20], 5) is None
    assert claim_of(1, [10, 20], 5) == Claim(1, 20, 5)


def test_a_canonical_line_is_read_in_place_and_proven_lines_only_in_a_contiguous_run() -> None:
    line = canonical(4)
    assert SessionEvent.from_canonical_json(line) == events(4, 5)[0]
    assert SessionEvent.from_canonical_json(b"x" + line + b"y", 1, len(line) + 1) == events(4, 5)[0]
    assert SessionEvent.from_canonical_json(line + b" ") is None
    assert SessionEvent.from_canonical_json(b"") is None
    run = line + b"\n" + b"junk\n" + line + b"\n"
    held = list(SessionEvent._from_proven_lines(run, 0, len(run)))
    # It stops at the first line it cannot read, never skipping to a later one.
    assert held == [(0, len(line) + 1, events(4, 5)[0])]
    long_type = b'{"seq":0,"type":"a/' + b"b" * 130 + b'","time":1,"data":1}\n'
    assert list(SessionEvent._from_proven_lines(long_type, 0, len(long_type))) == []


def test_a_claim_of_fewer_lines_than_its_range_holds_proves_nothing() -> None:
    # A right CRC over a range whose lines the claim miscounts (a foreign or broken
    # sidecar): what lies between must not vanish into the last claimed line.
    bad = b'{"type":"note/hand","seq":1,"time":1,"data":1,"extra":2}'
    data, start = log_of(canonical(0), bad, canonical(1))
    end = start + len(canonical(0)) + 1 + len(bad) + 1
    with pytest.raises(CorruptLog, match="line 3: invalid event"):
        read_log(PATH, "s1", data, None, claim_over(data, start, 1, end))


# -- through the backend -------------------------------------------------------------------


async def test_a_released_log_keeps_the_proof_of_every_line_the_backend_wrote(
    tmp_path: Path,
) -> None:
    backend = JsonlBackend(tmp_path)
    await backend.initialize(header(), events(0, LONG))
    await backend.append("s1", events(LONG, LONG + 2))
    await backend.release("s1")
    await backend.aclose()
    stored = line_index.decode(sidecar(tmp_path).read_bytes())
    assert stored is not None
    data = log_path(tmp_path).read_bytes()
    assert stored.proven == LONG + 2
    assert stored.crc == zlib.crc32(data[data.index(b"\n") + 1 :])


async def test_a_restarted_backend_reads_a_proven_log_without_proving_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = events(0, LONG, source={"kind": "user"})  # line 1 gives the list its preview
    backend = JsonlBackend(tmp_path)
    await backend.initialize(header(), written)
    await backend.aclose()
    checked: list[bytes] = []
    real = SessionEvent.from_canonical_json

    def spy(raw: bytes, start: int = 0, stop: int | None = None) -> object:
        checked.append(raw[start:stop])
        return real(raw, start, stop)

    monkeypatch.setattr(SessionEvent, "from_canonical_json", staticmethod(spy))
    fresh = JsonlBackend(tmp_path)
    try:
        stored = await fresh.inspect("s1")
    finally:
        await fresh.aclose()
    assert stored is not None and list(stored.events) == written
    assert len(checked) == 1  # the line the summary's preview is read from, nothing else


async def test_a_proven_line_changed_in_place_is_read_in_full_and_named(
    tmp_path: Path,
) -> None:
    await long_session(tmp_path)
    path = log_path(tmp_path)
    stamp = path.stat()
    # Same size, same first and last lines, same times; the line still looks canonical.
    broken = canonical(7).replace(b'"text":', b'"text",')
    corrupt(tmp_path, 9, broken)
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    fresh = JsonlBackend(tmp_path)
    try:
        with pytest.raises(CorruptLog, match=r"line 9.*invalid event"):
            await fresh.inspect("s1")
    finally:
        await fresh.aclose()


async def test_a_sidecar_with_a_proof_it_cannot_hold_is_ignored(tmp_path: Path) -> None:
    await long_session(tmp_path)
    data = sidecar(tmp_path).read_bytes()
    for bad in (b'"proven":-1', b'"proven":99999', b'"proven":"all"'):
        damaged = data.replace(b'"proven":%d' % LONG, bad)
        assert damaged != data
        assert line_index.decode(damaged) is None
    assert line_index.decode(data.replace(b'"crc":', b'"crc":"x",  "was":')) is None
    assert line_index.decode(data.replace(line_index.MAGIC, b"DSH-LINE-INDEX 1\n")) is None


async def test_an_append_after_a_line_that_is_not_canonical_does_not_extend_the_proof(
    tmp_path: Path,
) -> None:
    await long_session(tmp_path)
    corrupt(tmp_path, 7, HAND_WRITTEN.replace(b"note/hand", b"message/user") % 5)  # seq 5
    backend = JsonlBackend(tmp_path)
    try:
        stored = await backend.inspect("s1")  # proves lines 0–4, reads line 5 in full
        assert stored is not None and stored.events[5].data_json == b"1.5"
        await backend.append("s1", events(LONG, LONG + 1))
        await backend.release("s1")
    finally:
        await backend.aclose()
    kept = line_index.decode(sidecar(tmp_path).read_bytes())
    assert kept is not None and kept.proven == 5
