"""Storage faults the kernel makes: a full disk, then a disk out of inodes.

`test_storage_faults.py` scripts faults inside the backend. Here `dsh web`
with the schedule overlay runs with its data dir on `tests/support/fulldisk.py`'s
disk — a real 1 MiB tmpfs where the machine lets the test mount one (as root),
a simulated one elsewhere (the figures say which ran) — and

- the disk is **filled** until `write()` fails with ENOSPC while a Session
  is sent messages: each is answered 202 (queued), `/api/health` turns 503
  `storage_degraded` and stays answerable; once space is back every message
  is stored with nobody touching the Session (the retry with backoff of
  DESIGN §4), health is 200 again, and after a SIGKILL the restarted host
  reads every message back;
- on the real tmpfs, every **inode** is then taken: creating a Session
  answers 503 naming ENOSPC and no phantom Session appears in the list; once
  inodes are free, it answers 201.

(A read-only remount would be a third fault, but Linux refuses to remount
read-only while a file is open for writing, as every live log is.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.fulldisk import FullDisk
from tests.support.webhost import REPO, WebHost, wait_for

from .figures import Figures

pytestmark = pytest.mark.reliability

WRAPPER = REPO / "tests" / "reliability" / "wrapped_dsh.py"
MESSAGES = 5
DEADLINE = 60.0


def stored_texts(web: WebHost, session_id: str) -> list[str]:
    return [
        str(line["data"]["text"])
        for line in web.stored_log(session_id)[1:]
        if line.get("type") == "message/user"
    ]


def degraded(web: WebHost) -> dict[str, Any] | None:
    """`/api/health`'s body while it answers 503, else None."""
    response = web.get("/api/health")
    body: dict[str, Any] = response.json()
    return body if response.status_code == 503 else None


def send(web: WebHost, session_id: str, text: str) -> None:
    response = web.post(f"/api/sessions/{session_id}/messages", {"text": text})
    assert response.status_code == 202, response.text


def listed(web: WebHost) -> set[str]:
    return {str(s["id"]) for s in web.get("/api/sessions").json()["sessions"]}


def fill_and_free(
    web: WebHost, disk: FullDisk, session_id: str, counters: dict[str, Any]
) -> list[str]:
    """Fill the disk, send MESSAGES messages, see health degraded, free it, and wait
    until every message is stored; the texts sent."""
    texts = [f"full-disk message {n}" for n in range(MESSAGES)]
    disk.fill()
    for text in texts:
        send(web, session_id, text)
    body = wait_for(lambda: degraded(web), timeout=DEADLINE, what="health to say degraded")
    assert body["error"]["code"] == "storage_degraded", body
    counters["unconfirmed_events_seen"] = int(body["unconfirmed"])
    # A full disk still takes a line that fits in a page the log already has.
    during = sum(text in stored_texts(web, session_id) for text in texts)
    assert during < len(texts)
    counters["messages_stored_while_full"] = during
    disk.free()
    wait_for(
        lambda: set(texts) <= set(stored_texts(web, session_id)),
        timeout=DEADLINE,
        what="the messages sent while the disk was full to be stored once space returned",
    )
    wait_for(
        lambda: web.get("/api/health").status_code == 200,
        timeout=DEADLINE,
        what="health to be ok again",
    )
    counters["messages_sent_while_full"] = len(texts)
    return texts


def run_out_of_inodes(
    web: WebHost, disk: FullDisk, session_id: str, counters: dict[str, Any]
) -> None:
    counters["inodes_taken"] = disk.take_inodes()
    refused = web.post("/api/sessions")
    assert refused.status_code == 503, refused.text
    assert "No space left on device" in refused.json()["error"]["message"]
    assert listed(web) == {session_id}  # no phantom
    counters["creates_refused_out_of_inodes"] = 1
    disk.free()
    assert web.create_session() in listed(web)
    counters["creates_after_inodes_freed"] = 1


def test_a_full_disk_and_no_inodes_lose_nothing(tmp_path: Path, figures: Figures) -> None:
    counters: dict[str, Any] = {}
    with FullDisk.open(tmp_path) as disk:
        counters["real_tmpfs"] = int(disk.real)
        web = WebHost(
            data_dir=disk.directory,
            dsh=[sys.executable, str(WRAPPER)],
            extra_env={**disk.process_env(), "PYTHONPATH": str(REPO)},
        )
        web.boot()
        try:
            session_id = web.create_session()
            sent = ["before any fault"]
            send(web, session_id, sent[0])
            wait_for(
                lambda: sent[0] in stored_texts(web, session_id),
                timeout=DEADLINE,
                what="the first message to be stored",
            )
            sent += fill_and_free(web, disk, session_id, counters)
            if disk.real:
                run_out_of_inodes(web, disk, session_id, counters)
            web.kill()
            web.boot()
            read_back = [
                event["data"]["text"]
                for event in web.all_events(session_id)["events"]
                if event["type"] == "message/user"
            ]
            assert read_back == sent
            counters["messages_read_back_after_sigkill"] = len(read_back)
            counters["lost"] = len(set(sent) - set(read_back))
        finally:
            web.stop()
    figures.merge("tmpfs", counters)
