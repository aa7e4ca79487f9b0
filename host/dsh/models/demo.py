"""The `demo` model: the offline default, deterministic, and honest about being a demo.

It knows no plugin's words. What it understands, plugins teach it: each
`DemoSkill` they contribute (`dsh_demo_skills`) is asked, in the plugins'
order, for the reply to the conversation as it stands (`answer`); the first
that has one answers. The schedule plugin's skill reads reminder requests
("remind me in 10 seconds to stretch", "明天上午9点提醒我开会"), calls its
tools and words their results.

When no skill answers, the demo says what it is, what its skills understand
(each one's `help`), and how to configure a real model — in Chinese when the
person's latest message in words is Chinese. With no plugin loaded (`dsh web`
without an overlay) it can only talk, and says how to load plugins.

Every reply is streamed through `on_delta` in a few fragments, its reasoning
first (`dsh.models.streaming`), so offline hosts exercise the same delta
path a network model does. It never raises `ModelError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import anyio

from ..base.clock import Clock, SystemClock
from .base import DeltaSink, Message, ModelReply, ModelRequest
from .streaming import stream_reply

if TYPE_CHECKING:
    from .registry import ModelContext

__all__ = ["DemoModel", "DemoSkill", "answer", "help_text", "in_chinese"]

_CHINESE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_REAL_MODEL = "--model openai"
_OVERLAY = "--overlay overlays/web-schedule"


@runtime_checkable
class DemoSkill(Protocol):
    """What a plugin teaches the demo model (`dsh_demo_skills`).

    Both methods are pure functions of their arguments: the demo must stay
    deterministic. `now_ms` is "now" only for a conversation whose messages
    say nothing of when they were written.
    """

    def answer(self, request: ModelRequest, now_ms: int) -> ModelReply | None:
        """The demo's reply when this skill understands the conversation as it stands
        (its latest message, or the tool results it asked for); None leaves it to others."""

    def help(self, request: ModelRequest, chinese: bool) -> str | None:
        """What the help text says this skill understands (a paragraph), or None."""


Skills = Callable[[], Sequence[DemoSkill]]


class DemoModel:
    """The offline demo adapter.

    `skills` gives the skills of the Host's loaded plugins, asked at every
    request (a Host that builds its model from `--model demo` passes its own:
    `dsh.plugins.contributions.Contributions.demo_skills`); without it the
    demo only talks. `clock` dates a request whose messages carry no time.
    """

    name = "demo"
    description = "demo (offline)"

    def __init__(self, clock: Clock | None = None, skills: Skills | None = None) -> None:
        self.clock: Clock = clock or SystemClock()
        self.skills: Skills = skills or (lambda: ())
        self._taught = skills is not None

    def attach(self, context: ModelContext) -> None:
        """Learn the skills of the Host that runs this demo (unless it was given its own)."""
        if not self._taught and context.demo_skills is not None:
            self.skills = context.demo_skills

    async def complete(
        self, request: ModelRequest, on_delta: DeltaSink | None = None
    ) -> ModelReply:
        """Answer deterministically from `request`; never raises `ModelError`."""
        # In a worker thread: a skill may load a parser's data the first time it
        # reads a time (dateparser: 150-300 ms), which must not stall the loop.
        reply = await anyio.to_thread.run_sync(
            partial(answer, request, self.skills(), now_ms=self.clock.wall_ms())
        )
        await stream_reply(reply, on_delta)
        return reply


def answer(request: ModelRequest, skills: Sequence[DemoSkill], *, now_ms: int = 0) -> ModelReply:
    """The demo's whole reply to `request` (a pure function of it and its skills)."""
    for skill in skills:
        reply = skill.answer(request, now_ms)
        if reply is not None:
            return reply
    chinese = in_chinese(request.messages)
    taught = [text for skill in skills if (text := skill.help(request, chinese))]
    return ModelReply(text=help_text(chinese, taught))


def help_text(chinese: bool, taught: Sequence[str]) -> str:
    """What the demo is, what its skills taught it (`taught`), and how to use a real model."""
    if chinese:
        lines = ["我是 dsh 的演示模型（demo）：离线、确定性的替身，不是真正的语言模型。"]
        lines += taught or [
            f"此主机没有加载插件，所以我只能回答这段帮助。要加载插件，请用 {_OVERLAY} 运行 dsh。"
        ]
        lines.append(
            f"要使用真正的模型，请用 {_REAL_MODEL} 运行 dsh，并设置 DSH_API_KEY、"
            "DSH_MODEL_BASE_URL 和 DSH_MODEL（任何兼容 OpenAI 的接口）。"
        )
        return "\n".join(lines)
    lines = [
        "I'm the dsh demo model: an offline, deterministic stand-in, not a real language model."
    ]
    lines += taught or [
        "No plugin is loaded in this host, so all I can do is answer with this help. "
        f"To load plugins, run dsh with an overlay: {_OVERLAY}"
    ]
    lines.append(
        f"To talk to a real model, run dsh with {_REAL_MODEL} and set DSH_API_KEY, "
        "DSH_MODEL_BASE_URL and DSH_MODEL (any OpenAI-compatible endpoint)."
    )
    return "\n".join(lines)


def in_chinese(messages: Sequence[Message]) -> bool:
    """The conversation's language: the person's latest message with letters or ideographs."""
    for message in reversed(messages):
        if message.role != "user" or message.source.get("kind", "user") != "user":
            continue
        if _CHINESE.search(message.text):
            return True
        if _LATIN_WORD.search(message.text):
            return False
    return False
