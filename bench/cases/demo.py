"""The demo model reading reminders: what its date parser (dateparser) costs, and when.

The schedule plugin's demo skill reads times with dateparser, imported the
first time it reads one (`dsh_tool_schedule.demo.when`), so that neither
`dsh web`'s start nor a host that never runs the demo pays for it:

- `plugin_import_ms`: importing the plugin, and whether that imported
  dateparser (`dateparser_at_import`, which must be false);
- `first_reply_ms`: the first reply that reads a time — it imports dateparser
  and loads its English and Chinese data; once per process, on the event
  loop of the host that runs the demo;
- `reply_ms`: each later reply, over every row of the plugin README's phrase
  table (what the person says first);
- `rss_mib`: resident memory the first reply added.
"""

from __future__ import annotations

import os
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..sizes import Size
from ..stats import summary

__all__ = ["demo"]

_README = Path(__file__).resolve().parents[2] / "plugins" / "tool-schedule" / "README.md"
_ROUNDS = {"smoke": 1, "quick": 5}


def demo(size: Size, data_dir: Path) -> dict[str, Any]:
    started = time.perf_counter()
    from dsh_tool_schedule.demo import ScheduleDemoSkill  # its cost is measured

    plugin_import_ms = (time.perf_counter() - started) * 1000
    at_import = "dateparser" in sys.modules
    from dsh.models import Message, ModelRequest

    skill = ScheduleDemoSkill()
    tools = [{"type": "function", "function": {"name": "schedule_create"}}]
    now = int(datetime(2026, 12, 5, 9, 0, tzinfo=UTC).timestamp() * 1000)

    def reply(text: str) -> float:
        message = Message(role="user", text=text, time_zone="Europe/Berlin", time=now)
        started = time.perf_counter()
        skill.answer(ModelRequest(messages=[message], tools=tools), now)
        return (time.perf_counter() - started) * 1000

    before = _rss_mib()
    first_reply_ms = reply("remind me on Friday at 5pm to call mom")
    added_mib = _rss_mib() - before
    phrases = _phrases()
    samples = [reply(text) for _ in range(_ROUNDS.get(size.name, 20)) for text in phrases]
    return {
        "plugin_import_ms": round(plugin_import_ms, 1),
        "dateparser_at_import": at_import,
        "first_reply_ms": round(first_reply_ms, 1),
        "reply_ms": summary(samples, 2),
        "phrases": len(phrases),
        "rss_mib": round(added_mib, 1),
    }


def _phrases() -> list[str]:
    """What the person says first in each row of the plugin README's phrase table."""
    table = _README.read_text(encoding="utf-8").split("<!-- demo-phrases -->")[1]
    rows = table.split("<!-- /demo-phrases -->")[0].splitlines()[3:]
    return [found.group(1) for row in rows if (found := re.match(r"\| `([^`]+)`", row))]


def _rss_mib() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
