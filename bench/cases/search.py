"""Search what was said: how long a search takes over N Sessions × M messages.

The index the host keeps beside a JSONL data dir (`dsh.search.sqlite`) is
filled with N Sessions (full: 10,000) of M messages each (100): sentences
of English words and Chinese phrases drawn from fixed vocabularies with a
seeded generator, so every run searches the same text. Then each query
below is asked `search_rounds` times through `Search.find`'s own path (the
index, then one best message per Session with its snippet), and each
answer timed. Target (issue 37): the median ≤ 50 ms at the full size.

Queries: a two-character Chinese word in about 1 % of the messages
(`开会`), a common English word (in about a third of them), a rare one, a
prefix as a person types it (`umbr`), two words together, and a word that
is nowhere. Figures: the build (messages per second, file size) and, per
query, the answer's median and p99 and how many Sessions it found.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

from dsh.host.search import HITS, MAX_SESSIONS, Match
from dsh.search.index import Document
from dsh.search.sqlite import FILE_NAME, SqliteSearchIndex
from dsh.search.terms import parse_query, snippet

from ..sizes import Size
from ..stats import summary

__all__ = ["search"]

ENGLISH = [
    "the",
    "a",
    "remind",
    "me",
    "to",
    "call",
    "water",
    "plants",
    "stretch",
    "tomorrow",
    "morning",
    "report",
    "meeting",
    "notes",
    "coffee",
    "train",
    "ticket",
    "doctor",
    "lunch",
    "dinner",
    "review",
    "budget",
    "garden",
    "walk",
    "read",
    "book",
    "email",
    "friday",
    "weekend",
    "project",
    "deadline",
    "draft",
    "send",
    "check",
    "bring",
    "laptop",
    "umbrella",
    "kettle",
]
CHINESE = [
    "明天",
    "下午",
    "提醒",
    "喝水",
    "报告",
    "电脑",
    "周末",
    "项目",
    "会议",
    "午饭",
    "散步",
    "读书",
    "邮件",
    "复习",
    "预算",
]
RARE = "lighthouse"
QUERIES = ("开会", "the", RARE, "umbr", "coffee train", "zzyzx")


def sentence(rng: random.Random) -> str:
    words = [rng.choice(ENGLISH) for _ in range(rng.randint(6, 14))]
    if rng.random() < 0.4:
        words.insert(rng.randrange(len(words)), "".join(rng.sample(CHINESE, 2)))
    if rng.random() < 0.01:
        words.insert(rng.randrange(len(words)), "明天下午三点开会")
    if rng.random() < 0.0005:
        words.insert(rng.randrange(len(words)), RARE)
    return " ".join(words)


async def search(size: Size, data_dir: Path) -> dict[str, Any]:
    rng = random.Random(20261205)
    index = SqliteSearchIndex(data_dir)
    await index.open()
    messages = size.search_sessions * size.search_messages
    started = time.perf_counter()
    for number in range(size.search_sessions):
        documents = [Document(seq, sentence(rng)) for seq in range(size.search_messages)]
        await index.add(f"s{number:06d}", documents, size.search_messages)
    built = time.perf_counter() - started
    queries: dict[str, Any] = {}
    everything: list[float] = []
    for text in QUERIES:
        query = parse_query(text)
        times: list[float] = []
        found = 0
        for _ in range(size.search_rounds):
            began = time.perf_counter()
            hits = await index.search(query, HITS)
            best: dict[str, Match] = {}
            for hit in hits:
                if hit.session_id not in best:
                    best[hit.session_id] = Match(hit.seq, snippet(hit.text, query), hit.rank)
                    if len(best) == MAX_SESSIONS:
                        break
            times.append((time.perf_counter() - began) * 1000)
            found = len(best)
        everything.extend(times)
        queries[text] = {"ms": summary(times), "sessions": found}
    await index.aclose()
    return {
        "sessions": size.search_sessions,
        "messages_per_session": size.search_messages,
        "build_s": built,
        "build_messages_per_s": messages / built if built else None,
        "file_bytes": (data_dir / FILE_NAME).stat().st_size,
        "queries": queries,
        "all_ms": summary(everything),
    }
