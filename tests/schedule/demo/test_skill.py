from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
import pytest
from pydantic import JsonValue

from dsh.agents.agent import Agent
from dsh.agents.tools import Tool, ToolArguments, ToolContext
from dsh.models import Message, ModelAdapter, ModelReply, ModelRequest, StreamSink
from dsh.models.base import ToolCall
from dsh.models.demo import DemoModel as Demo
from dsh.models.demo import answer as demo_answer
from dsh.session.live import LiveSessions
from dsh.session.log import Session
from dsh.testing import FakeClock
from dsh_tool_schedule.demo import ScheduleDemoSkill
from tests.support.deadlines import WAIT

pytestmark = pytest.mark.anyio

#: The host's demo model, taught by this plugin's skill (what `dsh_demo_skills` gives it).
SKILLS = [ScheduleDemoSkill()]


def answer(request: ModelRequest, *, now_ms: int = 0) -> ModelReply:
    return demo_answer(request, SKILLS, now_ms=now_ms)


def DemoModel(clock: FakeClock | None = None) -> Demo:
    return Demo(clock, skills=lambda: SKILLS)


SCHEDULE = ("schedule_create", "schedule_list", "schedule_delete")


def schema(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


def request(
    text: str,
    *,
    tools: Sequence[str] = SCHEDULE,
    source: dict[str, JsonValue] | None = None,
    history: Sequence[Message] = (),
    zone: str | None = None,
    time: int | None = None,
) -> ModelRequest:
    user = Message(
        role="user", text=text, source=source or {"kind": "user"}, time_zone=zone, time=time
    )
    return ModelRequest(messages=(*history, user), tools=[schema(name) for name in tools])


# -- the pinned table: what the user says → what the model does --------------


def create(prompt: str, seconds: int) -> tuple[str, dict[str, Any]]:
    return "schedule_create", {"prompt": prompt, "after_seconds": seconds}


TABLE: list[tuple[str, str, dict[str, Any]]] = [
    ("remind me in 10 seconds to stretch", *create("stretch", 10)),
    ("remind me to call mom in 5 minutes", *create("call mom", 300)),
    ("in 2 hours remind me to check the oven", *create("check the oven", 7200)),
    ("10秒后提醒我喝水", *create("喝水", 10)),
    ("5分钟后提醒我开会", *create("开会", 300)),
    ("list reminders", "schedule_list", {}),
    ("列出提醒", "schedule_list", {}),
    ("cancel reminder rem-7", "schedule_delete", {"id": "rem-7"}),
    ("删除提醒 rem-7", "schedule_delete", {"id": "rem-7"}),
]


@pytest.mark.parametrize(("text", "name", "arguments"), TABLE)
def test_each_pinned_request_becomes_its_tool_call(
    text: str, name: str, arguments: dict[str, Any]
) -> None:
    reply = answer(request(text))

    assert reply.tool_calls == (ToolCall("call_1", name, arguments),)
    assert reply.text  # a short note accompanies the call
    assert reply.reasoning is not None
    label = (
        "演示模型的固定推理" if "演示" in reply.reasoning else "The demo model's canned reasoning"
    )
    assert label in reply.reasoning
    assert f"{name}" in reply.reasoning
    assert reply.reasoning not in reply.text


@pytest.mark.parametrize(("text", "name", "arguments"), TABLE)
def test_without_its_tool_a_reminder_request_says_reminders_are_not_enabled(
    text: str, name: str, arguments: dict[str, Any]
) -> None:
    others = [tool for tool in SCHEDULE if tool != name]

    for tools in ([], others):
        reply = answer(request(text, tools=tools))
        assert reply.tool_calls == ()
        assert "dsh web --overlay overlays/web-schedule" in reply.text
        chinese = any("\u4e00" <= char <= "\u9fff" for char in text)
        expected = "此主机未启用提醒功能" if chinese else "Reminders are not enabled in this host"
        assert reply.text.startswith(expected)


def test_call_ids_count_every_earlier_call_in_the_conversation() -> None:
    earlier = Message(
        role="assistant", tool_calls=(ToolCall("call_1", "a", {}), ToolCall("call_2", "b", {}))
    )

    reply = answer(request("list reminders", history=[Message(role="user", text="x"), earlier]))

    assert reply.tool_calls[0].id == "call_3"


def test_an_unclear_reminder_request_explains_the_phrasing_when_enabled() -> None:
    reply = answer(request("remind me at 25:00 to stretch"))

    assert reply.tool_calls == ()
    assert reply.text.startswith("I couldn't read that reminder.")


def test_an_unclear_reminder_request_says_not_enabled_without_the_tools() -> None:
    reply = answer(request("提醒我喝水", tools=[]))

    assert reply.text.startswith("此主机未启用提醒功能")


@pytest.mark.parametrize(
    ("text", "marker"), [("hello", "I'm the dsh demo model"), ("你好", "我是 dsh 的演示模型")]
)
def test_anything_else_gets_help_in_the_users_language(text: str, marker: str) -> None:
    reply = answer(request(text))

    assert reply.tool_calls == ()
    assert reply.text.startswith(marker)
    assert "--model openai" in reply.text
    assert "overlays/web-schedule" not in reply.text


def test_help_without_reminder_tools_says_how_to_enable_them() -> None:
    assert "dsh web --overlay overlays/web-schedule" in answer(request("hello", tools=[])).text


@pytest.mark.parametrize(
    "messages",
    [(), (Message(role="assistant", text="hi"),)],
    ids=["empty", "assistant-last"],
)
def test_a_conversation_not_ending_in_user_or_tool_messages_gets_help(
    messages: tuple[Message, ...],
) -> None:
    reply = answer(ModelRequest(messages=messages, tools=[schema("schedule_create")]))

    assert reply.text.startswith("I'm the dsh demo model")
    assert "overlays/web-schedule" not in reply.text


@pytest.mark.parametrize(
    ("source", "text"),
    [
        ({"kind": "schedule", "scheduleId": "rem-1", "prompt": "stretch"}, "⏰ Reminder: stretch"),
        ({"kind": "schedule", "scheduleId": "rem-2", "prompt": "喝水"}, "⏰ 提醒：喝水"),
        ({"kind": "schedule", "scheduleId": "rem-3"}, "⏰ Reminder rem-3 is due."),
        ({"kind": "schedule", "prompt": "  "}, "⏰ A reminder is due."),
    ],
)
def test_a_schedule_follow_up_is_recognised_by_its_source_not_its_text(
    source: dict[str, Any], text: str
) -> None:
    reply = answer(request('Prompt: "a frame the demo must not parse"', source=source))

    assert reply == type(reply)(text=text)


def test_a_reminder_s_prompt_comes_from_the_tool_results_that_named_its_id() -> None:
    created = {"id": "rem-1", "prompt": "stretch", "state": "scheduled"}
    listed = {"reminders": [{"id": "rem-2", "prompt": "drink water"}, "odd", {"id": "rem-3"}]}
    history = [
        Message(role="user", text="remind me"),
        Message(role="tool", name="schedule_create", tool_call_id="c1", content=created),
        Message(role="tool", name="schedule_list", tool_call_id="c2", content=listed),
        Message(role="tool", name="other", tool_call_id="c3", content="text"),
    ]

    def due(reminder_id: str) -> str:
        follow_up = Message(
            role="user",
            text="[Scheduled reminder] ...",
            source={"kind": "schedule", "scheduleId": reminder_id},
        )
        return answer(ModelRequest(messages=[*history, follow_up], tools=[])).text

    assert due("rem-1") == "⏰ Reminder: stretch"
    assert due("rem-2") == "⏰ Reminder: drink water"
    assert due("rem-3") == "⏰ Reminder rem-3 is due."


def test_tool_results_are_answered_together_in_the_language_of_the_user() -> None:
    history = [
        Message(role="user", text="列出提醒"),
        Message(role="assistant", tool_calls=(ToolCall("call_1", "schedule_list", {}),)),
        Message(
            role="tool", name="schedule_list", tool_call_id="call_1", content={"reminders": []}
        ),
        Message(role="tool", name="weather", tool_call_id="call_2", content=1),
    ]

    reply = answer(ModelRequest(messages=history, tools=[]))

    assert reply.tool_calls == ()
    assert reply.text == "当前没有提醒。\n\nweather 返回：1"


def test_the_demo_is_deterministic() -> None:
    assert answer(request("remind me in 10 seconds to stretch")) == answer(
        request("remind me in 10 seconds to stretch")
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "list reminders",
            "(The demo model's canned reasoning, not a real model's thoughts.) "
            "The message asks to see the reminders. This conversation offers schedule_list, "
            "so I call it.",
        ),
        (
            "删除提醒 rem-7",
            "（演示模型的固定推理，不是真正模型的思考。）这条消息要删除提醒 rem-7。"
            "这个对话提供 schedule_delete，所以调用它。",
        ),
        (
            "10秒后提醒我喝水",
            "（演示模型的固定推理，不是真正模型的思考。）这条消息要我在10秒后提醒“喝水”。"
            "这个对话提供 schedule_create，所以调用它。",
        ),
    ],
)
def test_the_demo_reasons_briefly_before_a_tool_call_in_the_users_language(
    text: str, expected: str
) -> None:
    assert answer(request(text)).reasoning == expected


def test_replies_without_a_tool_call_have_no_reasoning() -> None:
    assert answer(request("hello")).reasoning is None
    assert answer(request("list reminders", tools=[])).reasoning is None


async def test_the_adapter_streams_reasoning_on_its_own_channel_before_the_text() -> None:
    events: list[tuple[str, str]] = []
    sink = StreamSink(
        lambda text: events.append(("answer", text)),
        lambda text: events.append(("reasoning", text)),
    )

    reply = await DemoModel().complete(request("list reminders"), on_delta=sink)

    channels = [channel for channel, _ in events]
    assert channels == ["reasoning"] * 3 + ["answer"] * 3
    assert "".join(text for channel, text in events if channel == "reasoning") == reply.reasoning
    assert "".join(text for channel, text in events if channel == "answer") == reply.text


async def test_the_adapter_streams_its_text_and_returns_the_whole_reply() -> None:
    model = DemoModel()
    deltas: list[str] = []

    reply = await model.complete(request("hello"), on_delta=deltas.append)

    assert isinstance(model, ModelAdapter)
    assert model.name == "demo"
    assert len(deltas) == 3
    assert "".join(deltas) == reply.text
    assert await model.complete(request("hello")) == reply


# -- end to end through an Agent ---------------------------------------------


class CreateArgs(ToolArguments):
    prompt: str
    after_seconds: int


class FakeCreate(Tool[CreateArgs]):
    """Answers like the schedule plugin's schedule_create."""

    name = "schedule_create"
    description = "create a reminder"
    arguments = CreateArgs

    async def run(self, args: CreateArgs, ctx: ToolContext) -> JsonValue:
        return {
            "id": "rem-1",
            "kind": "after",
            "prompt": args.prompt,
            "afterSeconds": args.after_seconds,
            "scheduledAt": "2026-01-01T00:00:10.000Z",
            "state": "scheduled",
            "deliveryMode": "session-local",
        }


async def test_a_reminder_turn_runs_end_to_end_through_an_agent() -> None:
    clock = FakeClock()
    live = LiveSessions(clock)
    session = Session.new("demo-e2e", cwd="/", created_at=clock.wall_ms())
    live.open(session)
    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            agent = Agent(session=session, live=live, model=DemoModel(), group=group)
            agent.tools.register(FakeCreate())

            agent.submit("remind me in 10 seconds to stretch")
            await agent.when_idle()
            agent.followup("[Scheduled reminder] ...", {"kind": "schedule", "scheduleId": "rem-1"})
            await agent.when_idle()
            await agent.aclose()

    assert [event.type for event in session.events] == [
        "message/user",
        "message/assistant",
        "tool/result",
        "message/assistant",
        "turn/end",
        "message/user",
        "message/assistant",
        "turn/end",
    ]
    call = session.events[1].data
    assert call == {
        "text": "Setting a reminder in 10 seconds: “stretch”.",
        "toolCalls": [
            {
                "id": "call_1",
                "name": "schedule_create",
                "arguments": {"prompt": "stretch", "after_seconds": 10},
            }
        ],
        "reasoning": "(The demo model's canned reasoning, not a real model's thoughts.) "
        "The message asks for a reminder in 10 seconds: “stretch”. "
        "This conversation offers schedule_create, so I call it.",
    }
    summary = session.events[3].data
    assert isinstance(summary, dict)
    text = summary["text"]
    assert isinstance(text, str)
    assert "rem-1" in text
    assert "2026-01-01 00:00:10 UTC" in text
    assert "It fires only while this conversation is open." in text
    assert session.events[6].data == {"text": "⏰ Reminder: stretch", "toolCalls": []}


def test_malformed_tool_schemas_are_ignored_when_reading_what_is_offered() -> None:
    tools: list[dict[str, Any]] = [{"type": "function"}, {"function": {"name": 3}}, {}]

    reply = answer(
        ModelRequest(messages=[Message(role="user", text="list reminders")], tools=tools)
    )

    assert reply.text.startswith("Reminders are not enabled in this host")


def test_a_conversation_of_only_tool_results_is_answered_in_english() -> None:
    only = Message(role="tool", name="schedule_list", content={"reminders": []})

    assert answer(ModelRequest(messages=[only], tools=[])).text == "You have no reminders."


# -- times in the person's zone, recurrence, and changes in two steps ------------------------

ALL = (*SCHEDULE, "schedule_update")
WRITTEN = 1_767_310_200_000  # 2026-01-01T23:30:00Z: already 2 January in Berlin


ZONED: list[tuple[str, dict[str, Any]]] = [
    (
        "remind me at 9:00 tomorrow to call mum",
        {"prompt": "call mum", "at": "2026-01-03T09:00", "time_zone": "Europe/Berlin"},
    ),
    (
        "remind me every day at 9 to water the plants",
        {"prompt": "water the plants", "cron": "0 9 * * *", "time_zone": "Europe/Berlin"},
    ),
    (
        "every weekday at 8:30 remind me to stand up",
        {"prompt": "stand up", "cron": "30 8 * * MON-FRI", "time_zone": "Europe/Berlin"},
    ),
    ("remind me every 2 hours to drink water", {"prompt": "drink water", "every_seconds": 7200}),
    (
        "明天上午9点提醒我开会",
        {"prompt": "开会", "at": "2026-01-03T09:00", "time_zone": "Europe/Berlin"},
    ),
    (
        "每天早上9点提醒我喝水",
        {"prompt": "喝水", "cron": "0 9 * * *", "time_zone": "Europe/Berlin"},
    ),
    ("每隔2小时提醒我起来走走", {"prompt": "起来走走", "every_seconds": 7200}),
]


@pytest.mark.parametrize(("text", "arguments"), ZONED)
def test_times_are_read_in_the_person_s_zone_when_they_wrote(
    text: str, arguments: dict[str, Any]
) -> None:
    reply = answer(request(text, zone="Europe/Berlin", time=WRITTEN))

    assert reply.tool_calls == (ToolCall("call_1", "schedule_create", arguments),)


def test_the_zone_is_the_latest_one_the_person_sent_else_utc() -> None:
    earlier = Message(role="user", text="hi", time_zone="Asia/Tokyo")
    follow_up = Message(role="user", text="[Scheduled reminder]", source={"kind": "schedule"})

    zoned = answer(request("remind me at 23:45 today to x", history=[earlier, follow_up]))
    plain = answer(request("remind me at 23:45 today to x", time=WRITTEN))

    assert zoned.tool_calls[0].arguments["time_zone"] == "Asia/Tokyo"
    assert plain.tool_calls[0].arguments == {
        "prompt": "x",
        "at": "2026-01-01T23:45",
        "time_zone": "UTC",
    }


async def test_without_a_stored_time_the_adapter_s_clock_says_what_today_is() -> None:
    model = DemoModel(clock=FakeClock(WRITTEN))

    reply = await model.complete(request("remind me at 9:00 tomorrow to x", zone="Asia/Tokyo"))

    assert reply.tool_calls[0].arguments["at"] == "2026-01-03T09:00"


def listed(*views: dict[str, Any]) -> Message:
    return Message(
        role="tool", name="schedule_list", tool_call_id="call_1", content={"reminders": list(views)}
    )


DAILY_VIEW: dict[str, Any] = {
    "id": "rem-2",
    "prompt": "water the plants",
    "rule": {"kind": "cron", "cron": "0 9 * * *"},
    "ruleText": "at 09:00 every day (Europe/Berlin)",
    "timeZone": "Europe/Berlin",
    "nextAt": "2026-01-02T08:00:00.000Z",
    "state": "scheduled",
    "revision": 1,
}


def step(text: str, *after: Message, zone: str = "Europe/Berlin") -> ModelReply:
    """The reply to `text` once `after` (an assistant call and its results) happened."""
    first = request(text, tools=ALL, zone=zone, time=WRITTEN)
    return answer(ModelRequest(messages=(*first.messages, *after), tools=first.tools))


CALL_LIST = Message(role="assistant", tool_calls=(ToolCall("call_1", "schedule_list", {}),))


@pytest.mark.parametrize(
    ("text", "update", "said"),
    [
        (
            "pause reminder rem-2",
            {"id": "rem-2", "revision": 1, "paused": True},
            "Reminder rem-2 is paused: “water the plants”.",
        ),
        (
            "resume reminder rem-2",
            {"id": "rem-2", "revision": 1, "paused": False},
            "Reminder rem-2 is resumed: “water the plants”, next at 2026-01-02 09:00:00 "
            "Europe/Berlin (2026-01-02 08:00:00 UTC).",
        ),
        (
            "move rem-2 to 10:00",
            {"id": "rem-2", "revision": 1, "cron": "0 10 * * *", "time_zone": "Europe/Berlin"},
            "Reminder rem-2 now fires at 2026-01-02 09:00:00 Europe/Berlin "
            "(2026-01-02 08:00:00 UTC): “water the plants”.",
        ),
        (
            "暂停提醒 rem-2",
            {"id": "rem-2", "revision": 1, "paused": True},
            "已暂停提醒 rem-2（“water the plants”）。",
        ),
    ],
)
def test_a_change_lists_first_then_updates_that_revision_then_says_it(
    text: str, update: dict[str, Any], said: str
) -> None:
    listing = step(text)
    updating = step(text, CALL_LIST, listed(DAILY_VIEW))
    call = Message(role="assistant", tool_calls=updating.tool_calls)
    result = Message(role="tool", name="schedule_update", tool_call_id="call_2", content=DAILY_VIEW)
    done = step(text, CALL_LIST, listed(DAILY_VIEW), call, result)

    assert listing.tool_calls == (ToolCall("call_1", "schedule_list", {}),)
    assert listing.reasoning is not None and "schedule_list" in listing.reasoning
    assert updating.tool_calls == (ToolCall("call_2", "schedule_update", update),)
    assert updating.reasoning is not None and "schedule_update" in updating.reasoning
    assert (done.tool_calls, done.text) == ((), said)


def test_a_change_of_a_reminder_that_is_not_listed_or_cannot_move_is_said() -> None:
    quarterly = {**DAILY_VIEW, "rule": {"kind": "cron", "cron": "*/15 * * * *"}}

    missing = step("move rem-9 to 10:00", CALL_LIST, listed(DAILY_VIEW))
    stuck = step("move rem-2 to 10:00", CALL_LIST, listed(quarterly))
    empty = step(
        "把 rem-2 改到10点", CALL_LIST, Message(role="tool", name="schedule_list", content=[])
    )

    assert (missing.tool_calls, missing.text) == (
        (),
        "There is no active reminder rem-9 [schedule_not_found].",
    )
    assert stuck.text.startswith("I can only move a reminder that fires once")
    assert empty.text == "没有找到进行中的提醒 rem-2 [schedule_not_found]。"


def test_a_delete_by_words_or_of_all_says_when_nothing_matches() -> None:
    none = step("delete all reminders", CALL_LIST, listed())
    other = step("cancel the tea reminder", CALL_LIST, listed(DAILY_VIEW))
    both = step(
        "pause the water reminder",
        CALL_LIST,
        listed(DAILY_VIEW, {**DAILY_VIEW, "id": "rem-3", "prompt": "drink water"}),
    )

    assert (none.tool_calls, none.text) == ((), "You have no reminders.")
    assert (other.tool_calls, other.text) == ((), "No reminder matches “tea”.")
    assert both.tool_calls == ()
    assert both.text == "Which one: “water the plants” (rem-2) or “drink water” (rem-3)?"


def test_pausing_all_reminders_updates_each_with_its_own_revision() -> None:
    second = {**DAILY_VIEW, "id": "rem-3", "revision": 4}

    reply = step("pause all reminders", CALL_LIST, listed(DAILY_VIEW, second))

    assert [(call.id, call.name, call.arguments) for call in reply.tool_calls] == [
        ("call_2", "schedule_update", {"id": "rem-2", "revision": 1, "paused": True}),
        ("call_3", "schedule_update", {"id": "rem-3", "revision": 4, "paused": True}),
    ]
    assert reply.text == "Pausing reminder rem-2.\nPausing reminder rem-3."


def test_a_failed_list_or_update_is_said_not_retried() -> None:
    failed = Message(
        role="tool",
        name="schedule_list",
        tool_call_id="call_1",
        content={"code": "persistence_unavailable", "message": "no durable storage"},
        is_error=True,
    )

    reply = step("pause reminder rem-2", CALL_LIST, failed)

    assert reply.tool_calls == ()
    assert reply.text == "Couldn't list the reminders [persistence_unavailable]: no durable storage"


def test_a_change_needs_the_update_tool_too() -> None:
    reply = answer(request("pause reminder rem-2"))  # schedule_update is not offered

    assert reply.tool_calls == ()
    assert reply.text.startswith("Reminders are not enabled in this host")


def test_the_conversation_s_language_is_the_person_s_latest_message_in_words() -> None:
    chinese = Message(role="user", text="列出提醒")
    only_an_id = Message(role="user", text="rem-1 ?")
    english = Message(role="user", text="ok thanks")

    due = {"kind": "schedule", "scheduleId": "rem-1", "prompt": "stretch"}
    in_chinese = answer(request("[Scheduled reminder]", source=due, history=[chinese, only_an_id]))
    in_english = answer(request("[Scheduled reminder]", source=due, history=[chinese, english]))
    refused = answer(
        ModelRequest(
            messages=[
                chinese,
                CALL_LIST,
                Message(
                    role="tool",
                    name="schedule_create",
                    content={"code": "limit_exceeded", "message": "too many"},
                    is_error=True,
                ),
            ],
            tools=[],
        )
    )

    assert in_chinese.text == "⏰ 提醒：stretch"
    assert in_english.text == "⏰ Reminder: stretch"
    assert refused.text.startswith("设置提醒失败 [limit_exceeded]：")


def asked_when(text: str) -> list[Message]:
    """A conversation in which the person said `text` and the demo then asked when."""
    question = Message(role="assistant", text="When should I remind you?")
    return [Message(role="user", text=text), question]


def test_the_answer_to_when_completes_the_reminder_the_person_asked_for() -> None:
    reply = answer(request("at 5pm", history=asked_when("remind me to buy milk"), time=0))

    assert reply.tool_calls == (
        ToolCall(
            "call_1",
            "schedule_create",
            {"prompt": "buy milk", "at": "1970-01-01T17:00", "time_zone": "UTC"},
        ),
    )


def test_an_answer_to_when_that_is_no_time_is_read_as_a_request_of_its_own() -> None:
    listing = answer(request("list reminders", history=asked_when("remind me to buy milk")))
    assert listing.tool_calls == (ToolCall("call_1", "schedule_list", {}),)
    # The question followed something that was not a reminder without a time.
    assert "I'm the dsh demo model" in answer(request("at 5pm", history=asked_when("hello"))).text
    # Or nothing the person said: the question alone is not a conversation.
    alone = [Message(role="assistant", text="什么时候提醒你？")]
    assert "我是 dsh 的演示模型" in answer(request("明天", history=alone)).text


def test_a_reminder_without_a_time_is_asked_when_or_said_to_be_unavailable() -> None:
    assert answer(request("提醒我买牛奶")).text == "什么时候提醒你？"
    assert answer(request("remind me to buy milk", tools=["schedule_list"])).text.startswith(
        "Reminders are not enabled in this host"
    )


def test_an_answer_that_names_no_reminder_asks_again_and_a_new_request_is_its_own() -> None:
    history = [
        Message(role="user", text="cancel the water reminder"),
        Message(role="assistant", text="Which one: “a” (rem-1) or “b” (rem-2)?"),
    ]

    again = answer(request("the", history=history))
    other = answer(request("list reminders", history=history))

    assert again.tool_calls == (ToolCall("call_1", "schedule_list", {}),)
    assert "water" in again.text
    assert other.tool_calls == (ToolCall("call_1", "schedule_list", {}),)
    assert other.text == "Checking your reminders."
