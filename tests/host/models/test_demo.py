"""The host's `demo` model: no plugin's words; what it understands, skills teach it."""

from __future__ import annotations

import pytest

from dsh.models.base import Message, ModelReply, ModelRequest
from dsh.models.demo import DemoModel, DemoSkill, answer, help_text, in_chinese
from dsh.models.registry import ModelContext, resolve_model
from dsh.testing import FakeClock

pytestmark = pytest.mark.anyio


def said(text: str, *, kind: str = "user") -> Message:
    return Message(role="user", text=text, source={"kind": kind})


def asked(text: str) -> ModelRequest:
    return ModelRequest(messages=[said(text)], tools=[])


class Knows:
    """A skill that answers one phrase, and tells the time it was given."""

    def __init__(self, phrase: str) -> None:
        self.phrase = phrase

    def answer(self, request: ModelRequest, now_ms: int) -> ModelReply | None:
        if request.messages and request.messages[-1].text == self.phrase:
            return ModelReply(text=f"{self.phrase}! at {now_ms}")
        return None

    def help(self, request: ModelRequest, chinese: bool) -> str | None:
        return None if self.phrase == "quiet" else f"I know '{self.phrase}'."


@pytest.mark.parametrize("chinese", [False, True])
def test_without_skills_it_only_talks_and_says_how_to_load_plugins_and_a_real_model(
    chinese: bool,
) -> None:
    text = answer(asked("你好" if chinese else "hi there"), ()).text
    assert ("演示模型" if chinese else "demo model") in text
    assert "--overlay overlays/web-schedule" in text
    for needle in ("--model openai", "DSH_API_KEY", "DSH_MODEL_BASE_URL", "DSH_MODEL"):
        assert needle in text
    assert "remind" not in text and "提醒" not in text  # it knows no plugin's words


def test_the_first_skill_that_answers_wins_and_the_others_help_when_none_does() -> None:
    skills: list[DemoSkill] = [Knows("ping"), Knows("pong"), Knows("quiet")]
    assert answer(asked("pong"), skills, now_ms=7).text == "pong! at 7"
    helped = answer(asked("what?"), skills).text
    assert helped == help_text(False, ["I know 'ping'.", "I know 'pong'."])
    assert "--overlay" not in helped  # plugins are loaded: no advice to load them


def test_the_language_is_the_persons_latest_message_in_words() -> None:
    assert in_chinese([said("hello"), said("提醒我")])
    assert not in_chinese([said("提醒我"), said("ok then")])
    assert in_chinese([said("提醒我"), said("42")])  # no words: the one before decides
    assert not in_chinese([said("提醒我", kind="schedule")])  # a plugin's, not the person's
    assert not in_chinese([Message(role="assistant", text="提醒")])
    assert not in_chinese([])


async def test_it_streams_its_answer_and_learns_its_hosts_skills_unless_given_its_own() -> None:
    fragments: list[str] = []
    demo = DemoModel(FakeClock(5_000))
    demo.attach(ModelContext(demo_skills=lambda: [Knows("ping")]))
    reply = await demo.complete(asked("ping"), fragments.append)
    assert reply.text == "ping! at 5000" and "".join(fragments) == reply.text

    own = DemoModel(skills=lambda: [Knows("pong")])
    own.attach(ModelContext(demo_skills=lambda: [Knows("ping")]))
    assert "I know 'pong'." in (await own.complete(asked("x"))).text


def test_the_registry_builds_the_demo_with_its_hosts_clock_and_skills() -> None:
    clock = FakeClock(9)
    demo = resolve_model("demo", context=ModelContext(clock, lambda: [Knows("ping")]))
    assert isinstance(demo, DemoModel) and demo.clock is clock
    assert [type(skill) for skill in demo.skills()] == [Knows]
